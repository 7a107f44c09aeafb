"""Model files verified once per version of each file, not once per process.

Every process that loads the default model used to hash its 23 MB graph and its tokenizer
(about 100 ms of CPU) to refuse a damaged install (storage/encoders/model_files.py). A file whose
SHA-256 matched is now recorded in ``HOME/model_digests.json`` with what the file system says
of it: size, modification and change times, inode. A later process that finds all of them as
recorded, and the same expected digest, trusts the earlier check; any change re-hashes. The
change time (``st_ctime_ns``) is set by the kernel on every write and cannot be set back by a
tool that restores the modification time, so an altered file is hashed again and refused.

The record is a cache: a missing, unreadable or malformed file only means hashing again, and a
failed write is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path

__all__ = ["STAMPS_FILE", "DigestStamps"]

STAMPS_FILE = "model_digests.json"


def _fingerprint(path: Path) -> str | None:
    """What the file system says of ``path``: changes whenever its contents can have."""
    try:
        st = path.stat()
    except OSError:
        return None
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_dev}"


class DigestStamps:
    """The files of ``HOME/model_digests.json`` whose SHA-256 was checked, as they were then."""

    def __init__(self, record: Path) -> None:
        self.record = record
        try:
            loaded = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}
        self._stamps: dict[str, list[str]] = {
            str(k): [str(x) for x in v]
            for k, v in (loaded.items() if isinstance(loaded, dict) else ())
            if isinstance(v, list) and len(v) == 2
        }

    def vouches(self, path: Path, expected: object) -> bool:
        """Whether ``path`` was found to have the digest ``expected`` and is unchanged since."""
        stamp = self._stamps.get(str(path.absolute()))
        fingerprint = _fingerprint(path)
        return stamp is not None and fingerprint is not None and stamp == [fingerprint, expected]

    def remember(self, path: Path, digest: str) -> None:
        """Record that ``path``, as it is now, has the SHA-256 ``digest``."""
        fingerprint = _fingerprint(path)
        if fingerprint is None:
            return
        self._stamps[str(path.absolute())] = [fingerprint, digest]
        temporary = self.record.with_name(f".{self.record.name}.{secrets.token_hex(4)}")
        with contextlib.suppress(OSError):
            try:
                temporary.write_text(json.dumps(self._stamps, sort_keys=True), encoding="utf-8")
                os.replace(temporary, self.record)
            finally:
                temporary.unlink(missing_ok=True)
