from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from feral.node.settings.config import (
    DEFAULT_NAME,
    MAX_CLOCK_SKEW_MS,
    SETTINGS_FILENAME,
    LLMSettings,
    MemorySettings,
    PeerSettings,
    SearchSettings,
    Settings,
    SyncSettings,
    load_settings,
    save_settings,
    settings_from_dict,
    settings_to_dict,
    with_peer,
    without_peer,
)
from feral.node.settings.limits import MAX_TOP_K
from feral.sync.errors import ConfigError, HomeFileError, NotFoundError
from feral.sync.types import NodeId

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")

A = NodeId("a" * 32)
B = NodeId("b" * 32)
C = NodeId("c" * 32)

CUSTOM = Settings(
    name="laptop",
    memory=MemorySettings(
        working_memory_budget=4000, compaction_trigger=0.5, compaction_strategy="extractive"
    ),
    sync=SyncSettings(
        peers=(PeerSettings(A, "wss://phone.local:9090/sync"), PeerSettings(B, None)),
        conflict_resolution="last_write_wins",
        max_clock_skew_ms=60_000,
    ),
    search=SearchSettings(top_k=3, strategy="fts", alpha=0.25, mmr=True, mmr_lambda=0.9),
)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def write_settings(home: Path, text: str) -> Path:
    home.mkdir(exist_ok=True)
    path = home / SETTINGS_FILENAME
    path.write_text(text, encoding="utf-8")
    return path


def assertRefused(tmp_path: Path, document: object, expected: str) -> str:
    """Loading ``document`` from a file fails with a message starting with the file's path."""
    path = write_settings(tmp_path / "home", json.dumps(document))
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path / "home")
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert expected in message, message
    return message


# Defaults and round trips


def test_defaults_are_feral_defaults():
    settings = Settings()
    assert settings.name == DEFAULT_NAME == "feral-node"
    assert settings.memory == MemorySettings(8000, 0.85, "extractive")
    assert settings.sync == SyncSettings((), "last_write_wins", 300_000)
    # alpha is 0.65, not FERAL's 0.5: the vector weight chosen with the fusion's constants
    # (benchmarks/README.md, Retrieval quality)
    assert settings.search == SearchSettings(10, "hybrid", 0.65, False, 0.7)


def test_a_missing_file_means_defaults(tmp_path):
    (tmp_path / "home").mkdir()
    assert load_settings(tmp_path / "home") == Settings()


def test_a_missing_home_means_defaults_and_is_not_created(tmp_path):
    assert load_settings(tmp_path / "home") == Settings()
    assert not (tmp_path / "home").exists()


def test_an_empty_object_means_defaults(tmp_path):
    write_settings(tmp_path / "home", "{}")
    assert load_settings(tmp_path / "home") == Settings()


def test_missing_keys_take_their_defaults(tmp_path):
    write_settings(tmp_path / "home", '{"memory": {"working_memory_budget": 100}, "sync": {}}')
    assert load_settings(tmp_path / "home") == Settings(
        memory=MemorySettings(working_memory_budget=100)
    )


def test_save_then_load_gives_equal_settings(tmp_path):
    save_settings(tmp_path / "home", CUSTOM)
    assert load_settings(tmp_path / "home") == CUSTOM


def test_save_then_load_of_defaults_gives_defaults(tmp_path):
    save_settings(tmp_path / "home", Settings())
    assert load_settings(tmp_path / "home") == Settings()


def test_dict_round_trip_gives_equal_settings():
    assert settings_from_dict(settings_to_dict(CUSTOM)) == CUSTOM


def test_settings_to_dict_is_feral_shaped_json():
    data = settings_to_dict(CUSTOM)
    assert set(data) == {"name", "memory", "sync", "search", "cli"}
    assert data["cli"] == {"resident_idle_s": 600.0}
    assert data["sync"]["peers"] == [
        {"node_id": A, "url": "wss://phone.local:9090/sync"},
        {"node_id": B, "url": None},
    ]
    assert json.loads(json.dumps(data)) == data


def test_the_saved_file_is_pretty_json_with_sorted_keys_and_a_trailing_newline(tmp_path):
    save_settings(tmp_path / "home", CUSTOM)
    text = (tmp_path / "home" / SETTINGS_FILENAME).read_text(encoding="utf-8")
    assert text == json.dumps(settings_to_dict(CUSTOM), indent=2, sort_keys=True) + "\n"
    assert text.index('"memory"') < text.index('"name"') < text.index('"search"')


def test_a_file_that_names_few_keys_is_saved_whole(tmp_path):
    # A loaded section holds only the keys its file named (the rest fall back to the class's
    # defaults); saving it once failed with KeyError 'peers', and `feral init --name` with it.
    write_settings(tmp_path / "home", '{"sync": {"max_clock_skew_ms": 60000}, "search": {}}')
    settings = load_settings(tmp_path / "home")
    save_settings(tmp_path / "home", replace(settings, name="laptop"))
    saved = json.loads((tmp_path / "home" / SETTINGS_FILENAME).read_text(encoding="utf-8"))
    expected = Settings(name="laptop", sync=SyncSettings(max_clock_skew_ms=60_000))
    assert saved == settings_to_dict(expected)
    assert saved["sync"]["peers"] == [] and saved["search"]["top_k"] == 10


@pytest.mark.parametrize("old_value", [True, False, "yes", None])
def test_a_file_with_the_retired_sync_enabled_still_loads_and_is_saved_without_it(
    tmp_path, old_value
):
    # Replication never read sync.enabled; files written before its removal keep loading.
    document = {"sync": {"enabled": old_value, "max_clock_skew_ms": 60_000}}
    write_settings(tmp_path / "home", json.dumps(document))
    settings = load_settings(tmp_path / "home")
    assert settings == Settings(sync=SyncSettings(max_clock_skew_ms=60_000))
    save_settings(tmp_path / "home", settings)
    saved = json.loads((tmp_path / "home" / SETTINGS_FILENAME).read_text(encoding="utf-8"))
    assert "enabled" not in saved["sync"]
    assert saved["sync"]["max_clock_skew_ms"] == 60_000


def test_enabled_is_still_an_unknown_key_outside_sync(tmp_path):
    assertRefused(tmp_path, {"search": {"enabled": True}}, "search.enabled is not a known key")


def test_integers_are_accepted_where_numbers_are_expected(tmp_path):
    write_settings(tmp_path / "home", '{"search": {"alpha": 1, "mmr_lambda": 0}}')
    search = load_settings(tmp_path / "home").search
    assert (search.alpha, search.mmr_lambda) == (1.0, 0.0)
    assert isinstance(search.alpha, float)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("memory", "compaction_trigger", 1),
        ("search", "alpha", 0),
        ("search", "mmr_lambda", 1.0),
        ("sync", "max_clock_skew_ms", MAX_CLOCK_SKEW_MS),
        ("sync", "max_clock_skew_ms", 1),
        ("memory", "working_memory_budget", 1),
    ],
)
def test_boundary_values_are_accepted(section, key, value):
    settings = settings_from_dict({section: {key: value}})
    assert getattr(getattr(settings, section), key) == value


def test_a_byte_order_mark_is_tolerated(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / SETTINGS_FILENAME).write_bytes(b'\xef\xbb\xbf{"name": "phone"}')
    assert load_settings(tmp_path / "home").name == "phone"


def test_a_non_ascii_name_round_trips(tmp_path):
    save_settings(tmp_path / "home", Settings(name="Zoë's phone"))
    assert load_settings(tmp_path / "home").name == "Zoë's phone"


# Files and modes


@posix_only
def test_save_creates_the_home_0700_and_the_file_0600(tmp_path):
    save_settings(tmp_path / "home", Settings())
    assert mode_of(tmp_path / "home") == 0o700
    assert mode_of(tmp_path / "home" / SETTINGS_FILENAME) == 0o600


@posix_only
def test_saving_over_a_loose_file_leaves_it_0600_and_no_temporary_files(tmp_path):
    path = write_settings(tmp_path / "home", "{}")
    path.chmod(0o644)
    save_settings(tmp_path / "home", CUSTOM)
    assert mode_of(path) == 0o600
    assert os.listdir(tmp_path / "home") == [SETTINGS_FILENAME]


@posix_only
def test_saving_into_an_existing_home_keeps_its_mode(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home").chmod(0o755)
    save_settings(tmp_path / "home", Settings())
    assert mode_of(tmp_path / "home") == 0o755


def test_invalid_settings_are_refused_before_anything_is_written(tmp_path):
    bad = Settings(search=SearchSettings(alpha=2.0))
    with pytest.raises(ConfigError, match=r"settings\.json: search\.alpha must be"):
        save_settings(tmp_path / "home", bad)
    assert not (tmp_path / "home").exists()


def test_a_settings_path_that_is_a_directory_is_a_home_file_error(tmp_path):
    (tmp_path / "home" / SETTINGS_FILENAME).mkdir(parents=True)
    with pytest.raises(HomeFileError, match=r"settings\.json: cannot read"):
        load_settings(tmp_path / "home")


def test_a_huge_file_is_a_config_error(tmp_path):
    write_settings(tmp_path / "home", " " * (1024 * 1024 + 1))
    with pytest.raises(ConfigError, match="larger than"):
        load_settings(tmp_path / "home")


def test_a_file_that_is_not_utf8_is_a_config_error(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / SETTINGS_FILENAME).write_bytes(b'{"name": "\xff"}')
    with pytest.raises(ConfigError, match=r"settings\.json: not UTF-8 text \(byte 10\)"):
        load_settings(tmp_path / "home")


# Malformed JSON


def test_malformed_json_names_the_file_line_and_column(tmp_path):
    text = '{\n  "memory": {\n    "working_memory_budget": 10,\n  }\n}\n'
    path = write_settings(tmp_path / "home", text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path / "home")
    assert str(info.value).startswith(f"{path}: invalid JSON at line 4, column 3: ")


def test_an_empty_file_is_malformed_json_at_line_1_column_1(tmp_path):
    write_settings(tmp_path / "home", "")
    with pytest.raises(ConfigError, match="invalid JSON at line 1, column 1"):
        load_settings(tmp_path / "home")


def test_a_duplicate_key_is_refused_rather_than_silently_overridden(tmp_path):
    write_settings(tmp_path / "home", '{"sync": {"peers": [], "peers": []}}')
    with pytest.raises(ConfigError, match='the key "peers" appears twice'):
        load_settings(tmp_path / "home")


def test_absurdly_nested_json_is_a_config_error(tmp_path):
    write_settings(tmp_path / "home", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_settings(tmp_path / "home")


# Unknown keys


def test_a_document_that_is_not_an_object_is_refused(tmp_path):
    assertRefused(tmp_path, [1, 2], "the top level must be a JSON object, got [1, 2]")


def test_an_unknown_section_is_refused_by_name(tmp_path):
    assertRefused(tmp_path, {"plugins": {}}, "plugins is not a known key; the top level takes")


def test_an_unknown_key_in_a_section_is_refused_with_its_path(tmp_path):
    message = assertRefused(
        tmp_path, {"sync": {"max_clock_skew": 1000}}, "sync.max_clock_skew is not a known key"
    )
    assert "max_clock_skew_ms" in message


def test_several_unknown_keys_are_all_named(tmp_path):
    assertRefused(
        tmp_path, {"memory": {"budget": 1, "trigger": 1}}, "memory.budget, memory.trigger are not"
    )


def test_an_unknown_key_in_a_peer_is_refused_with_its_path(tmp_path):
    document = {"sync": {"peers": [{"node_id": A, "address": "x"}]}}
    assertRefused(tmp_path, document, "sync.peers[0].address is not a known key")


@pytest.mark.parametrize("section", ["memory", "sync", "search", "cli"])
def test_a_section_that_is_not_an_object_is_refused(tmp_path, section):
    assertRefused(tmp_path, {section: 5}, f"{section} must be a JSON object, got 5")


# Values

INVALID = [
    ("name", "", "name must be a non-empty string"),
    ("name", "   ", "name must be a non-empty string"),
    ("name", 5, "name must be a non-empty string"),
    ("name", "line\nbreak", "name must be a non-empty string of printable characters"),
    ("name", "x" * 65, "name must be at most 64 characters"),
    ("memory.working_memory_budget", 0, "must be a positive integer, got 0"),
    ("memory.working_memory_budget", -5, "must be a positive integer, got -5"),
    ("memory.working_memory_budget", 8000.0, "must be a positive integer, got 8000.0"),
    ("memory.working_memory_budget", True, "must be a positive integer, got true"),
    ("memory.working_memory_budget", "8000", 'must be a positive integer, got "8000"'),
    ("memory.compaction_trigger", 0, "must be a number greater than 0 and at most 1, got 0"),
    ("memory.compaction_trigger", 1.5, "must be a number greater than 0 and at most 1"),
    ("memory.compaction_trigger", "0.5", 'must be a number, got "0.5"'),
    ("memory.compaction_trigger", True, "must be a number, got true"),
    ("memory.compaction_trigger", None, "must be a number, got null"),
    ("memory.compaction_strategy", "abstractive", 'must be one of "extractive"'),
    ("sync.peers", {}, "must be a list of peers, got {}"),
    ("sync.conflict_resolution", "crdt", 'must be one of "last_write_wins", got "crdt"'),
    ("sync.max_clock_skew_ms", "abc", 'must be a positive integer, got "abc"'),
    ("sync.max_clock_skew_ms", 0, "must be a positive integer, got 0"),
    ("sync.max_clock_skew_ms", False, "must be a positive integer, got false"),
    ("sync.max_clock_skew_ms", MAX_CLOCK_SKEW_MS + 1, f"must be at most {MAX_CLOCK_SKEW_MS}"),
    ("search.top_k", 0, "must be a positive integer, got 0"),
    ("search.top_k", 2.5, "must be a positive integer, got 2.5"),
    ("search.top_k", MAX_TOP_K + 1, f"must be at most {MAX_TOP_K}, got {MAX_TOP_K + 1}"),
    (
        "memory.embedder",
        "word2vec",
        'must be one of "minilm-l6-int8", "minilm-static-256", "none", got "word2vec"',
    ),
    ("search.strategy", "bm25", 'must be one of "fts", "vector", "hybrid", got "bm25"'),
    ("search.strategy", None, "must be one of"),
    ("search.alpha", -0.1, "must be a number from 0 to 1, got -0.1"),
    ("search.alpha", 1.1, "must be a number from 0 to 1, got 1.1"),
    ("search.alpha", 10**400, "must be a number from 0 to 1"),
    ("search.mmr", "false", 'must be true or false, got "false"'),
    ("search.mmr_lambda", -1, "must be a number from 0 to 1, got -1"),
    ("search.mmr_lambda", [0.5], "must be a number, got [0.5]"),
    ("cli.resident_idle_s", -1, "must be a number from 0 to 86400, got -1"),
    ("cli.resident_idle_s", 86_401, "must be a number from 0 to 86400, got 86401"),
    ("cli.resident_idle_s", "10m", 'must be a number, got "10m"'),
]


@pytest.mark.parametrize(("key_path", "value", "expected"), INVALID)
def test_an_invalid_value_is_refused_naming_the_file_and_key_path(
    tmp_path, key_path, value, expected
):
    *sections, key = key_path.split(".")
    document: dict[str, object] = {key: value}
    for section in reversed(sections):
        document = {section: document}
    message = assertRefused(tmp_path, document, expected)
    assert message.startswith(f"{tmp_path / 'home' / SETTINGS_FILENAME}: {key_path} ")


def test_the_documented_example_message_is_exact(tmp_path):
    path = write_settings(tmp_path / "home", '{"sync": {"max_clock_skew_ms": "abc"}}')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path / "home")
    assert (
        str(info.value) == f'{path}: sync.max_clock_skew_ms must be a positive integer, got "abc"'
    )


def test_a_number_too_large_to_be_finite_is_refused(tmp_path):
    write_settings(tmp_path / "home", '{"search": {"alpha": 1e999}}')
    with pytest.raises(ConfigError, match=r"search\.alpha must be a finite number, got Infinity"):
        load_settings(tmp_path / "home")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_literals_are_not_json(tmp_path, literal):
    path = write_settings(tmp_path / "home", f'{{"search": {{"alpha": {literal}}}}}')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path / "home")
    assert str(info.value) == f"{path}: invalid JSON: {literal} is not a JSON number"


def test_long_bad_values_are_shortened_in_messages(tmp_path):
    message = assertRefused(tmp_path, {"search": {"strategy": "x" * 500}}, "search.strategy")
    assert message.endswith('got "' + "x" * 76 + "...")


def test_settings_from_dict_names_its_source():
    with pytest.raises(ConfigError, match=r"^settings\.json: search\.top_k must be"):
        settings_from_dict({"search": {"top_k": -1}})
    with pytest.raises(ConfigError, match=r"^--config: name must be"):
        settings_from_dict({"name": ""}, source="--config")


# Peers in the file

PEER_ERRORS = [
    ([5], "sync.peers[0] must be a JSON object, got 5"),
    ([{"url": "ws://x"}], "sync.peers[0].node_id is required"),
    ([{"node_id": "A" * 32}], "sync.peers[0].node_id must be a node id"),
    ([{"node_id": "a" * 31}], "sync.peers[0].node_id must be a node id"),
    ([{"node_id": "a" * 31 + "1"}], "sync.peers[0].node_id must be a node id"),
    ([{"node_id": 7}], "sync.peers[0].node_id must be a node id: 32 characters"),
    ([{"node_id": A, "url": "http://x:9090"}], "sync.peers[0].url must be null or a ws://"),
    ([{"node_id": A, "url": "ws://"}], "sync.peers[0].url must be null or a ws:// or wss:// URL"),
    ([{"node_id": A, "url": "ws://host:99999"}], "sync.peers[0].url must be null or"),
    ([{"node_id": A, "url": "ws://ho st"}], "sync.peers[0].url must be null or"),
    ([{"node_id": A, "url": 9090}], "sync.peers[0].url must be null or"),
    ([{"node_id": A}, {"node_id": A}], "sync.peers[1].node_id repeats sync.peers[0]"),
    (
        [{"node_id": A, "url": "ws://h"}, {"node_id": B}, {"node_id": C, "url": "ws://h"}],
        'sync.peers[2].url repeats sync.peers[0], got "ws://h"',
    ),
]


@pytest.mark.parametrize(("peers", "expected"), PEER_ERRORS)
def test_an_invalid_peer_is_refused_with_its_index_and_key(tmp_path, peers, expected):
    assertRefused(tmp_path, {"sync": {"peers": peers}}, expected)


def test_a_peer_without_url_is_accept_only(tmp_path):
    write_settings(tmp_path / "home", json.dumps({"sync": {"peers": [{"node_id": A}]}}))
    assert load_settings(tmp_path / "home").sync.peers == (PeerSettings(A, None),)


def test_peer_urls_may_be_ws_or_wss_with_a_port_and_path():
    urls = ["ws://127.0.0.1:9090/sync", "wss://[::1]:9090/sync", None]
    peers = [{"node_id": node_id, "url": url} for node_id, url in zip((A, B, C), urls, strict=True)]
    settings = settings_from_dict({"sync": {"peers": peers}})
    assert [p.url for p in settings.sync.peers] == urls


# Pairing helpers


def test_with_peer_appends_a_new_peer():
    settings = with_peer(Settings(), PeerSettings(A, "ws://a"))
    settings = with_peer(settings, PeerSettings(B))
    assert settings.sync.peers == (PeerSettings(A, "ws://a"), PeerSettings(B))


def test_with_peer_replaces_a_peer_with_the_same_node_id_in_place():
    settings = with_peer(with_peer(Settings(), PeerSettings(A, "ws://a")), PeerSettings(B))
    settings = with_peer(settings, PeerSettings(A, "wss://a-new"))
    assert settings.sync.peers == (PeerSettings(A, "wss://a-new"), PeerSettings(B))


def test_with_peer_keeps_the_other_settings():
    settings = with_peer(CUSTOM, PeerSettings(C))
    assert settings.search == CUSTOM.search
    assert settings.sync.max_clock_skew_ms == CUSTOM.sync.max_clock_skew_ms


@pytest.mark.parametrize(
    ("peer", "expected"),
    [
        (PeerSettings(NodeId("not-an-id")), "invalid peer: node_id must be a node id: "),
        (PeerSettings(A, "https://a"), "invalid peer: url must be null or a ws:// or wss:// URL"),
    ],
)
def test_with_peer_refuses_a_malformed_peer(peer, expected):
    with pytest.raises(ConfigError) as info:
        with_peer(Settings(), peer)
    assert str(info.value).startswith(expected)


def test_with_peer_refuses_a_url_that_belongs_to_another_peer():
    settings = with_peer(Settings(), PeerSettings(A, "ws://shared"))
    with pytest.raises(ConfigError, match=f"ws://shared already belongs to peer {A}"):
        with_peer(settings, PeerSettings(B, "ws://shared"))


def test_with_peer_result_saves_and_loads(tmp_path):
    save_settings(tmp_path / "home", with_peer(CUSTOM, PeerSettings(C, "ws://c:1/sync")))
    assert load_settings(tmp_path / "home").sync.peers[-1] == PeerSettings(C, "ws://c:1/sync")


def test_without_peer_removes_by_node_id():
    settings = without_peer(CUSTOM, A)
    assert settings.sync.peers == (PeerSettings(B, None),)


def test_without_peer_removes_by_url():
    settings = without_peer(CUSTOM, "wss://phone.local:9090/sync")
    assert settings.sync.peers == (PeerSettings(B, None),)


def test_without_peer_of_an_unknown_peer_is_not_found():
    with pytest.raises(NotFoundError, match="no paired peer has the node id or url 'ws://nope'"):
        without_peer(CUSTOM, "ws://nope")


def test_settings_are_frozen():
    with pytest.raises(AttributeError):
        Settings().name = "other"  # type: ignore[misc]


def test_a_value_json_cannot_show_is_shown_with_repr():
    with pytest.raises(ConfigError, match=r"name must be .*, got b'laptop'"):
        settings_from_dict({"name": b"laptop"})


# memory.llm: the optional summary endpoint

LLM = {"base_url": "http://127.0.0.1:11434/v1", "model": "tiny", "api_key_env": "FERAL_KEY"}


def test_an_llm_endpoint_round_trips_through_the_file(tmp_path):
    settings = settings_from_dict({"memory": {"compaction_strategy": "llm", "llm": LLM}})
    assert settings.memory.llm == LLMSettings(LLM["base_url"], "tiny", "FERAL_KEY")
    save_settings(tmp_path / "home", settings)
    assert load_settings(tmp_path / "home") == settings
    assert settings_to_dict(settings)["memory"]["llm"] == LLM


def test_the_llm_key_variable_is_optional_and_the_endpoint_is_off_by_default():
    settings = settings_from_dict({"memory": {"llm": {"base_url": "https://x.test", "model": "m"}}})
    assert settings.memory.llm is not None and settings.memory.llm.api_key_env is None
    assert Settings().memory.llm is None


@pytest.mark.parametrize(
    ("llm", "expected"),
    [
        ({"model": "m"}, "memory.llm.base_url is required"),
        ({"base_url": "http://x"}, "memory.llm.model is required"),
        ({**LLM, "base_url": "ftp://x"}, "memory.llm.base_url must be an http:// or https://"),
        ({**LLM, "base_url": "http://x:99999"}, "memory.llm.base_url must be an http://"),
        ({**LLM, "model": ""}, "memory.llm.model must be a non-empty string"),
        ({**LLM, "api_key_env": "sk-123 secret"}, "memory.llm.api_key_env must be null or"),
        ({**LLM, "api_key": "sk-123"}, "memory.llm.api_key is not a known key"),
        ("http://x", "memory.llm must be a JSON object"),
    ],
)
def test_a_bad_llm_endpoint_is_refused_naming_the_key(llm, expected):
    with pytest.raises(ConfigError) as info:
        settings_from_dict({"memory": {"llm": llm}})
    assert expected in str(info.value)


def test_the_llm_strategy_needs_an_endpoint():
    with pytest.raises(
        ConfigError, match='memory.llm must be set when compaction_strategy is "llm"'
    ):
        settings_from_dict({"memory": {"compaction_strategy": "llm"}})


def test_a_lone_surrogate_is_shown_escaped_so_the_message_can_be_printed():
    with pytest.raises(ConfigError) as info:
        settings_from_dict({"name": "\ud800"})
    assert (
        str(info.value)
        == 'settings.json: name must be a non-empty string of printable characters, got "\\ud800"'
    )
    str(info.value).encode("utf-8")


def test_settings_that_cannot_be_written_are_a_home_file_error_naming_the_file(tmp_path):
    (tmp_path / "home" / SETTINGS_FILENAME).mkdir(parents=True)  # a folder in the way
    with pytest.raises(HomeFileError, match=r"settings\.json: cannot write"):
        save_settings(tmp_path / "home", Settings())
