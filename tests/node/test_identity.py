from __future__ import annotations

import base64
import errno
import hashlib
import multiprocessing
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
)

from feral.node.home import identity as identity_module
from feral.node.home.identity import (
    KEY_FILENAME,
    Identity,
    ensure_home,
    identity_from_key,
    load_or_create_identity,
    node_id_for,
    sign,
    verify,
)
from feral.sync.delta import check_node_id
from feral.sync.errors import HomeFileError

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")

RFC8032_PUBLIC_KEY = bytes.fromhex(
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
)
"""The public key of RFC 8032 section 7.1, test 1."""


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def pem_of(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


@pytest.fixture
def umask() -> Iterator[None]:
    """Restore the process umask after a test changes it."""
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)


def assertKeyFileRefused(home: Path, match: str) -> None:
    with pytest.raises(HomeFileError, match=match) as info:
        load_or_create_identity(home)
    assert str(home / KEY_FILENAME) in str(info.value)


# The node id


def test_node_id_is_32_characters_of_lower_case_base32(tmp_path):
    node_id = load_or_create_identity(tmp_path / "home").node_id
    assert len(node_id) == 32
    assert set(node_id) <= set("abcdefghijklmnopqrstuvwxyz234567")
    assert check_node_id(node_id) == node_id


def test_node_id_is_base32_of_the_first_20_bytes_of_sha256_of_the_public_key(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    digest = hashlib.sha256(me.public_key).digest()[:20]
    assert me.node_id == base64.b32encode(digest).decode().lower()
    assert node_id_for(me.public_key) == me.node_id


def test_node_id_of_a_known_key_never_changes():
    assert node_id_for(RFC8032_PUBLIC_KEY) == "eh7ddx5bksrgcytl7bkai36se4nxx3kl"


def test_node_id_for_refuses_a_public_key_that_is_not_32_bytes():
    with pytest.raises(ValueError, match="32 bytes"):
        node_id_for(RFC8032_PUBLIC_KEY[:31])


def test_identity_is_stable_across_loads(tmp_path):
    first = load_or_create_identity(tmp_path / "home")
    second = load_or_create_identity(tmp_path / "home")
    assert second == first
    assert second.public_key == first.public_key
    assert len(first.public_key) == 32


def test_different_keys_give_different_node_ids(tmp_path):
    ids = {load_or_create_identity(tmp_path / str(n)).node_id for n in range(5)}
    assert len(ids) == 5


def test_identity_from_key_matches_the_loaded_identity(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    assert identity_from_key(me.private_key) == me


def test_repr_of_an_identity_leaves_out_the_private_key(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    assert "private" not in repr(me)
    assert me.node_id in repr(me)


# Signatures


def test_a_signature_verifies_with_the_signers_public_key(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    signature = sign(me, b"challenge")
    assert len(signature) == 64
    assert verify(me.public_key, b"challenge", signature)


def test_a_signature_survives_reloading_the_key(tmp_path):
    signature = sign(load_or_create_identity(tmp_path / "home"), b"challenge")
    reloaded = load_or_create_identity(tmp_path / "home")
    assert verify(reloaded.public_key, b"challenge", signature)


def test_tampered_data_fails_verification(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    assert not verify(me.public_key, b"challengf", sign(me, b"challenge"))


def test_a_tampered_signature_fails_verification(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    signature = bytearray(sign(me, b"challenge"))
    signature[0] ^= 1
    assert not verify(me.public_key, b"challenge", bytes(signature))


def test_another_nodes_key_fails_verification(tmp_path):
    me = load_or_create_identity(tmp_path / "me")
    other = load_or_create_identity(tmp_path / "other")
    assert not verify(other.public_key, b"challenge", sign(me, b"challenge"))


@pytest.mark.parametrize(
    ("public_key", "signature"),
    [(b"short", b"\0" * 64), (RFC8032_PUBLIC_KEY, b"short"), (b"", b"")],
)
def test_malformed_keys_and_signatures_fail_verification_without_raising(public_key, signature):
    assert not verify(public_key, b"challenge", signature)


# Files and modes


@posix_only
def test_first_use_creates_the_home_0700_and_the_key_0600(tmp_path):
    home = tmp_path / "parent" / "home"
    load_or_create_identity(home)
    assert mode_of(home) == 0o700
    assert mode_of(home / KEY_FILENAME) == 0o600


@posix_only
@pytest.mark.parametrize("mask", [0o000, 0o022, 0o277])
def test_modes_hold_whatever_the_umask(tmp_path, umask, mask):
    os.umask(mask)
    load_or_create_identity(tmp_path / "home")
    assert mode_of(tmp_path / "home") == 0o700
    assert mode_of(tmp_path / "home" / KEY_FILENAME) == 0o600


@posix_only
def test_an_existing_home_keeps_its_mode(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    load_or_create_identity(home)
    assert mode_of(home) == 0o755
    assert mode_of(home / KEY_FILENAME) == 0o600


@posix_only
def test_the_key_is_0600_before_it_gets_its_final_name(tmp_path, monkeypatch):
    modes = []
    real_link = os.link

    def recording_link(src, dst, **kwargs):
        modes.append(mode_of(Path(src)))
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", recording_link)
    load_or_create_identity(tmp_path / "home")
    assert modes == [0o600]


@posix_only
def test_a_key_readable_by_others_is_tightened_to_0600(tmp_path):
    first = load_or_create_identity(tmp_path / "home")
    (tmp_path / "home" / KEY_FILENAME).chmod(0o644)
    assert load_or_create_identity(tmp_path / "home") == first
    assert mode_of(tmp_path / "home" / KEY_FILENAME) == 0o600


def test_the_key_file_is_unencrypted_pkcs8_pem(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    data = (tmp_path / "home" / KEY_FILENAME).read_bytes()
    assert data.startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert data == pem_of(me.private_key)


def test_creating_the_key_leaves_no_temporary_files(tmp_path):
    load_or_create_identity(tmp_path / "home")
    assert os.listdir(tmp_path / "home") == [KEY_FILENAME]


def test_a_home_that_is_a_file_is_a_home_file_error(tmp_path):
    (tmp_path / "home").write_text("not a directory")
    with pytest.raises(HomeFileError, match="home"):
        load_or_create_identity(tmp_path / "home")


def test_a_home_under_a_file_is_a_home_file_error(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(HomeFileError, match="home"):
        ensure_home(tmp_path / "file" / "home")


# Damaged key files


@pytest.mark.parametrize(
    "content",
    [
        b"garbage",
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        b"\xff\xfe\x00binary",
    ],
)
def test_a_corrupt_key_file_is_a_home_file_error_naming_the_file(tmp_path, content):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / KEY_FILENAME).write_bytes(content)
    assertKeyFileRefused(tmp_path / "home", "not an unencrypted PEM private key")


def test_a_truncated_key_file_is_a_home_file_error(tmp_path):
    pem = pem_of(load_or_create_identity(tmp_path / "home").private_key)
    (tmp_path / "home" / KEY_FILENAME).write_bytes(pem[: len(pem) // 2])
    assertKeyFileRefused(tmp_path / "home", "not an unencrypted PEM private key")


def test_an_empty_key_file_is_a_home_file_error(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / KEY_FILENAME).write_bytes(b"")
    assertKeyFileRefused(tmp_path / "home", "empty")


def test_an_encrypted_key_file_is_a_home_file_error(tmp_path):
    pem = Ed25519PrivateKey.generate().private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(b"secret")
    )
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / KEY_FILENAME).write_bytes(pem)
    assertKeyFileRefused(tmp_path / "home", "not an unencrypted PEM private key")


def test_a_key_of_another_type_is_a_home_file_error(tmp_path):
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
    )
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / KEY_FILENAME).write_bytes(pem)
    assertKeyFileRefused(tmp_path / "home", "Ed25519")


def test_a_huge_key_file_is_a_home_file_error(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / KEY_FILENAME).write_bytes(b"x" * 100_000)
    assertKeyFileRefused(tmp_path / "home", "too large")


def test_a_key_path_that_is_a_directory_is_a_home_file_error(tmp_path):
    (tmp_path / "home" / KEY_FILENAME).mkdir(parents=True)
    assertKeyFileRefused(tmp_path / "home", "node key")


def test_an_unreadable_key_file_is_a_home_file_error(tmp_path, monkeypatch):
    load_or_create_identity(tmp_path / "home")
    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        if Path(path).name == KEY_FILENAME:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    assertKeyFileRefused(tmp_path / "home", "cannot read the node key: Permission denied")


# Racing first use


def test_losing_the_race_loads_the_winners_key(tmp_path, monkeypatch):
    home = tmp_path / "home"
    winner = Ed25519PrivateKey.generate()
    real_link = os.link

    def link_after_the_winner(src, dst, **kwargs):
        Path(dst).write_bytes(pem_of(winner))
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", link_after_the_winner)
    assert load_or_create_identity(home) == identity_from_key(winner)
    assert os.listdir(home) == [KEY_FILENAME]


@posix_only
def test_without_hard_links_the_key_is_written_in_place_with_mode_0600(tmp_path, monkeypatch):
    def no_links(src, dst, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    me = load_or_create_identity(tmp_path / "home")
    assert mode_of(tmp_path / "home" / KEY_FILENAME) == 0o600
    assert os.listdir(tmp_path / "home") == [KEY_FILENAME]
    monkeypatch.undo()
    assert load_or_create_identity(tmp_path / "home") == me


def test_without_hard_links_a_loser_waits_for_the_winner_to_finish(tmp_path, monkeypatch):
    home = tmp_path / "home"
    winner = Ed25519PrivateKey.generate()
    sleeps = []

    def winner_creates_first(src, dst, **kwargs):
        Path(dst).write_bytes(b"")  # the winner has created the file but not written it yet
        raise PermissionError(errno.EPERM, "Operation not permitted")

    def winner_finishes(seconds):
        sleeps.append(seconds)
        (home / KEY_FILENAME).write_bytes(pem_of(winner))

    monkeypatch.setattr(os, "link", winner_creates_first)
    monkeypatch.setattr(time, "sleep", winner_finishes)
    assert load_or_create_identity(home) == identity_from_key(winner)
    assert len(sleeps) == 1


def test_a_winner_that_never_writes_its_key_is_a_home_file_error(tmp_path, monkeypatch):
    def winner_creates_first(src, dst, **kwargs):
        Path(dst).write_bytes(b"")
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", winner_creates_first)
    monkeypatch.setattr(identity_module, "_RACE_POLL_S", 0.0)
    assertKeyFileRefused(tmp_path / "home", "empty")


def test_an_unexpected_link_error_is_a_home_file_error(tmp_path, monkeypatch):
    def failing_link(src, dst, **kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "link", failing_link)
    assertKeyFileRefused(tmp_path / "home", "cannot write the node key")
    assert os.listdir(tmp_path / "home") == []


def race_to_create_identities(homes, barrier, results):
    """Runs in a child process: for each home, wait for every racer, then load or create."""
    for home in homes:
        barrier.wait()
        results.put((home, load_or_create_identity(Path(home)).node_id))


def test_racing_first_use_in_several_processes_ends_with_one_key(tmp_path):
    racers, rounds = 4, 5
    homes = [str(tmp_path / f"home{n}") for n in range(rounds)]
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(racers)
    results = context.Queue()
    processes = [
        context.Process(target=race_to_create_identities, args=(homes, barrier, results))
        for _ in range(racers)
    ]
    for process in processes:
        process.start()
    seen: dict[str, set[str]] = {home: set() for home in homes}
    for _ in range(racers * rounds):
        home, node_id = results.get(timeout=60)
        seen[home].add(node_id)
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    for home in homes:
        assert seen[home] == {load_or_create_identity(Path(home)).node_id}
        assert os.listdir(home) == [KEY_FILENAME]


def test_identity_is_a_frozen_dataclass(tmp_path):
    me = load_or_create_identity(tmp_path / "home")
    assert isinstance(me, Identity)
    with pytest.raises(AttributeError):
        me.node_id = me.node_id  # type: ignore[misc]


def test_a_home_that_cannot_be_created_is_a_home_file_error(tmp_path, monkeypatch):
    def refusing_mkdir(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(Path, "mkdir", refusing_mkdir)
    with pytest.raises(HomeFileError, match="cannot create the home: Permission denied"):
        load_or_create_identity(tmp_path / "home")


@posix_only
def test_a_loose_key_that_cannot_be_tightened_is_a_home_file_error(tmp_path, monkeypatch):
    load_or_create_identity(tmp_path / "home")
    (tmp_path / "home" / KEY_FILENAME).chmod(0o644)

    def refusing_fchmod(fd, mode):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "fchmod", refusing_fchmod)
    assertKeyFileRefused(tmp_path / "home", r"readable by other users \(mode 0644\)")


def test_a_winners_key_that_vanishes_is_a_home_file_error(tmp_path, monkeypatch):
    def another_process_won_then_deleted_it(src, dst, **kwargs):
        raise FileExistsError(errno.EEXIST, "File exists")

    monkeypatch.setattr(os, "link", another_process_won_then_deleted_it)
    assertKeyFileRefused(tmp_path / "home", "vanished")


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    (tmp_path / "home").mkdir()

    def failing_fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    assertKeyFileRefused(tmp_path / "home", "No space left on device")
    assert os.listdir(tmp_path / "home") == []
