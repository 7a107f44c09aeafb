"""The node's home folder: its paths and files, its identity, and the marks of the processes running
on it."""
