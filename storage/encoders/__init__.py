"""The shipped embedding models (``models/``) and the encoders that run them."""
