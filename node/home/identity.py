"""This node's Ed25519 key pair and the node id derived from it.

A node id is the fingerprint of the node's public key (the Syncthing model): lower-case RFC 4648
base32, without padding, of the first 20 bytes of SHA-256 over the raw 32-byte public key. That is
exactly 32 characters of ``a-z2-7``, the form :func:`feral.sync.delta.check_node_id` accepts.
Because the id *is* the key's fingerprint, a peer that proves possession of the key (:func:`sign` /
:func:`verify`) has proved its id; nothing else has to be trusted.

The private key lives in ``<home>/node.key`` as unencrypted PKCS8 PEM, mode 0600, and never leaves
the node (TEST-CATALOG, "Secrets and files"). It is written so that it is never readable by anyone
else, not even for an instant, and so that two processes starting on a fresh home at once end with
one key:

1. the PEM goes to a fresh temporary file in the home, created with ``O_EXCL`` and mode 0600 (and
   ``fchmod`` to 0600, since the umask may have removed bits), then flushed to disk;
2. the temporary file is published under its final name with ``os.link``, which, unlike
   ``os.replace``, fails if the name exists: the first process wins, and a process that loses
   the race discards its own key and loads the winner's file. ``os.replace`` would let the later
   process silently overwrite the key the earlier one had already returned and started using;
3. where hard links are not allowed (some FAT, FUSE and Android mounts), the key is written
   directly to its final name opened with ``O_EXCL``; a loser that finds the file still empty waits
   briefly for the winner to finish writing it.

The home directory is created 0700 when missing. A home that already exists belongs to the user,
so its mode is left as it is.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

from feral.sync.errors import HomeFileError
from feral.sync.ids import node_id_for
from feral.sync.types import NodeId

from .files import O_BINARY, fill, fsync_directory, os_reason, write_private_file, write_temp
from .home_paths import KEY_FILENAME  # the private key's file name inside the home

__all__ = [
    "KEY_FILENAME",
    "Identity",
    "ensure_home",
    "identity_from_key",
    "load_or_create_identity",
    "node_id_for",
    "sign",
    "verify",
    "write_private_file",  # node/home/files.py's, still importable here (settings and API token)
]

MAX_KEY_FILE_BYTES = 64 * 1024
"""An Ed25519 PEM is about 120 bytes; anything far larger is not a key and is not read whole."""

_RACE_POLLS = 100
_RACE_POLL_S = 0.02
"""How long (100 × 20 ms) a race loser waits for a winner still writing without hard links."""

_NO_HARD_LINKS = frozenset(
    {errno.EPERM, errno.EACCES, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS}
)
"""``link()`` errors that mean "this file system or sandbox has no hard links", not "failed"."""


@dataclass(frozen=True)
class Identity:
    """A node's key pair and id.

    Identities compare by public key and id; the private key is kept out of ``repr`` so that it
    cannot end up in a log line or a test failure message.
    """

    private_key: Ed25519PrivateKey = field(repr=False, compare=False)
    """The signing key. It never leaves this process."""

    public_key: bytes
    """The raw 32-byte public key, as sent to peers."""

    node_id: NodeId
    """The public key's fingerprint (see :func:`node_id_for`)."""


def identity_from_key(private_key: Ed25519PrivateKey) -> Identity:
    """Wrap a private key with its raw public key and node id (also handy for in-memory nodes)."""
    public = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return Identity(private_key=private_key, public_key=public, node_id=node_id_for(public))


def sign(identity: Identity, data: bytes) -> bytes:
    """Sign ``data`` with the node's private key; the 64-byte signature proves the node id."""
    return identity.private_key.sign(data)


def verify(public_key_raw: bytes, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is the holder of ``public_key_raw``'s signature over ``data``.

    A malformed key or signature is a failed proof, not an error: the caller refuses the peer
    either way, so a boolean keeps peer input from raising out of the handshake.
    """
    try:
        Ed25519PublicKey.from_public_bytes(public_key_raw).verify(signature, data)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def load_or_create_identity(home: Path) -> Identity:
    """Load the node's identity from ``home``, creating the home and the key on first use.

    Args:
        home: the node's home directory (``--home``, default ``~/.feral``).

    Returns:
        The identity; the same one on every later call with the same home.

    Raises:
        HomeFileError: the home or the key file cannot be created or read, or the file does not
            hold an unencrypted Ed25519 private key. The message names the file.
    """
    ensure_home(home)
    path = home / KEY_FILENAME
    data = _read_key_file(path)
    if data is not None:
        return identity_from_key(_parse_key(path, data))
    created = _create_key(path)
    if created is not None:
        return identity_from_key(created)
    return identity_from_key(_parse_key(path, _read_winners_key(path)))


def ensure_home(home: Path) -> None:
    """Create ``home`` with mode 0700 if it does not exist.

    ``mkdir``'s mode passes through the umask, so a home we create is ``chmod``-ed to 0700
    explicitly. A directory that already exists is the user's (``--home`` may point at any
    folder), so its mode is never changed.

    Raises:
        HomeFileError: the home cannot be created, or exists and is not a directory.
    """
    try:
        home.parent.mkdir(parents=True, exist_ok=True)
        home.mkdir(mode=0o700)
        os.chmod(home, 0o700)
    except FileExistsError:
        if home.is_dir():
            return
        raise HomeFileError(f"{home}: cannot create the home: a file is in the way") from None
    except OSError as exc:
        raise HomeFileError(f"{home}: cannot create the home: {os_reason(exc)}") from exc


def _create_key(path: Path) -> Ed25519PrivateKey | None:
    """Generate a key and publish it at ``path``, unless another process already has.

    Returns:
        The new key, or ``None`` when a key file appeared first (the caller loads that one).
    """
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    try:
        temp = write_temp(path, pem)
        try:
            os.link(temp, path)  # exclusive: fails if the name exists, never overwrites
        except FileExistsError:
            return None
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            return key if _create_in_place(path, pem) else None
        finally:
            temp.unlink(missing_ok=True)
        fsync_directory(path.parent)
    except OSError as exc:
        raise HomeFileError(f"{path}: cannot write the node key: {os_reason(exc)}") from exc
    return key


def _create_in_place(path: Path, pem: bytes) -> bool:
    """Write the key straight to its final name, for file systems without hard links.

    Returns:
        ``False`` when the name already existed (another process won the race).
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY, 0o600)
    except FileExistsError:
        return False
    try:
        fill(fd, pem)
    except BaseException:
        path.unlink(missing_ok=True)  # ours (O_EXCL): never leave a half-written key behind
        raise
    fsync_directory(path.parent)
    return True


def _read_key_file(path: Path) -> bytes | None:
    """The key file's bytes, or ``None`` if there is none yet; tightens a loose mode to 0600.

    Raises:
        HomeFileError: the file exists but cannot be read, is not a regular file, or is too large.
    """
    try:
        fd = os.open(path, os.O_RDONLY | O_BINARY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HomeFileError(f"{path}: cannot read the node key: {os_reason(exc)}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise HomeFileError(f"{path}: the node key is not a regular file")
        if info.st_size > MAX_KEY_FILE_BYTES:
            raise HomeFileError(f"{path}: {info.st_size} bytes is too large for a node key")
        _tighten(path, fd, info.st_mode)
        chunks: list[bytes] = []
        while chunk := os.read(fd, MAX_KEY_FILE_BYTES + 1):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise HomeFileError(f"{path}: cannot read the node key: {os_reason(exc)}") from exc
    finally:
        os.close(fd)


def _tighten(path: Path, fd: int, mode: int) -> None:
    """Take group and other permissions off a key file (copied in by hand, say)."""
    if os.name != "posix" or not mode & 0o077:
        return
    try:
        os.fchmod(fd, 0o600)
    except OSError as exc:
        raise HomeFileError(
            f"{path}: the node key is readable by other users (mode {stat.S_IMODE(mode):04o}) "
            f"and cannot be changed to 0600: {os_reason(exc)}"
        ) from exc


def _read_winners_key(path: Path) -> bytes:
    """Read the key of the process that won the creation race, waiting while it is still empty.

    Only a winner on a file system without hard links can leave the file briefly empty.
    """
    for _ in range(_RACE_POLLS):
        data = _read_key_file(path)
        if data is None:
            raise HomeFileError(f"{path}: the node key vanished while it was being created")
        if data:
            return data
        time.sleep(_RACE_POLL_S)
    return b""


def _parse_key(path: Path, data: bytes) -> Ed25519PrivateKey:
    """Decode the PEM in ``data``, turning every cryptography error into a HomeFileError."""
    if not data.strip():
        raise HomeFileError(f"{path}: the node key file is empty; remove it to create a new key")
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        # TypeError: the key is encrypted; ValueError: not PEM, or damaged.
        raise HomeFileError(
            f"{path}: not an unencrypted PEM private key (the file is damaged or not a node key)"
        ) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise HomeFileError(f"{path}: holds a private key of another type; feral uses Ed25519")
    return key
