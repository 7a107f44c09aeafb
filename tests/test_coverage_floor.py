"""The coverage floors (tests/coverage_floor.py) read real coverage data: a layer whose tests ran
little is under its floor, one whose tests ran it is not."""

from __future__ import annotations

from pathlib import Path

from coverage import Coverage

from feral.sync.hlc import pack, unpack
from tests.coverage_floor import FLOORS, Measure, measure


def measured(tmp_path: Path, run: bool) -> dict[str, Measure]:
    """Coverage of ``feral.sync.hlc``, two of whose functions run while measuring (when ``run``)."""
    coverage = Coverage(data_file=str(tmp_path / "data"), config_file=False, include=["*/hlc.py"])
    coverage.set_option("run:disable_warnings", ["no-data-collected"])
    coverage.start()
    try:
        if run:
            assert unpack(pack(1_700_000_000_000, 3)) == (1_700_000_000_000, 3)
    finally:
        coverage.stop()
    return {m.package: m for m in measure(coverage)}


def test_a_layer_none_of_whose_code_ran_is_under_its_floor(tmp_path: Path) -> None:
    found = measured(tmp_path, run=False)
    assert set(found) == set(FLOORS)
    assert all(m.percent == 0.0 and m.under_floor for m in found.values()), found


def test_code_that_ran_counts_for_its_layer_and_only_its_layer(tmp_path: Path) -> None:
    found = measured(tmp_path, run=True)
    assert found["feral.sync"].percent > 0.0
    assert found["feral.storage"].percent == 0.0
