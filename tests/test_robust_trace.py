"""Damaged traces: one line naming the file, the line (JSONL) or row group (Parquet) and what
is wrong, exit 1, nothing written; never a traceback (issue 23, item 8).

The trace is ``trace_support``'s ``walk`` (3 agents: two walkers with a tree, one
external post) recorded for 3 ticks: line 1 is the header, lines 2-4 ticks 0-2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trace_support import run_recorded, walk_sim

from behaviortk.cli import main
from behaviortk.format.limits import MAX_TRACE_TICK
from behaviortk.record.jsonl import TraceWriter
from behaviortk.record.parquet import META_INDEX, ParquetTraceWriter
from behaviortk.record.reader import TraceError, open_recording

FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The parsed lines of a good JSONL trace (header, 3 ticks, end line)."""
    path = tmp_path_factory.mktemp("good") / "good.jsonl"
    sim = walk_sim("py_trees")
    with path.open("w", encoding="utf-8") as fh:
        run_recorded(sim, 3, TraceWriter(fh, sim))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write(path: Path, lines: list[dict[str, Any]], raw: dict[int, str] | None = None) -> Path:
    """The lines as a JSONL trace, ``raw`` replacing some lines' text (numbers JSON can't)."""
    texts = [json.dumps(line, separators=(",", ":")) for line in lines]
    for k, text in (raw or {}).items():
        texts[k] = text
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return path


def with_agent_field(lines: list[dict[str, Any]], agent: int, key: str, value: Any) -> list[Any]:
    out = json.loads(json.dumps(lines))
    out[1]["agents"][agent][key] = value
    return out


def replay_error(trace: Path, tmp_path: Path, capsys: Any, *extra: str) -> str:
    """Replay ``trace`` to a PNG: it must fail with one line and write nothing; the line."""
    out = tmp_path / "f.png"
    assert main(["replay", str(trace), "--tick", "0", "--out", str(out), *extra]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not out.exists()
    return err.rstrip("\n")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("status", 5, '"status" must be a string of status digits 0-3, got 5'),
        ("active", 5, '"active" must be a list of steering leaf names (strings), got 5'),
        ("active", [[1]], '"active" must be a list of steering leaf names (strings), got [[1]]'),
        ("active", "stop", '"active" must be a list of steering leaf names (strings), got "stop"'),
        ("id", 2**70, '"id" must be a whole number 0 to 2**63 - 1, got 1180591620717411303424'),
        ("id", 1.5, '"id" must be a whole number 0 to 2**63 - 1, got 1.5'),
        ("id", True, '"id" must be a whole number 0 to 2**63 - 1, got true'),
        ("pos", ["1", "2"], '"pos" must be [x, y], two numbers, got ["1", "2"]'),
        ("pos", [[1]], '"pos" must be [x, y], two numbers, got [[1]]'),
        ("vel", [1, 2, 3], '"vel" must be [vx, vy], two numbers, got [1, 2, 3]'),
        ("group", ["walkers"], '"group" must be a group name (a string), got ["walkers"]'),
    ],
)
def test_an_odd_agent_value_is_one_line_naming_file_line_agent_and_field(
    lines: list[Any], tmp_path: Path, capsys: Any, key: str, value: Any, message: str
) -> None:
    trace = write(tmp_path / "odd.jsonl", with_agent_field(lines, 1, key, value))
    err = replay_error(trace, tmp_path, capsys)
    assert err == f"behaviortk replay: error: {trace} line 2: agent 1: {message}"


def test_a_status_digit_out_of_range_names_the_line(lines: list[Any], tmp_path: Path) -> None:
    trace = write(tmp_path / "odd.jsonl", with_agent_field(lines, 0, "status", "11219"))
    with pytest.raises(TraceError) as err:
        open_recording(trace).state(0)
    assert str(err.value) == f"{trace} line 2: tick 0: status codes must be 0..3"


@pytest.mark.parametrize(
    ("tick", "shown"),
    [
        ("20000000000000000000", "20000000000000000000"),  # 20 digits: past int64
        (str(MAX_TRACE_TICK + 1), str(MAX_TRACE_TICK + 1)),
        ("9" * 5000, "a number of 5,000 digits"),  # past int()'s 4,300
    ],
)
def test_a_tick_a_trace_cannot_hold_is_refused_when_indexed(
    lines: list[Any], tmp_path: Path, capsys: Any, tick: str, shown: str
) -> None:
    text = json.dumps(lines[3], separators=(",", ":")).replace('"tick":2', f'"tick":{tick}')
    trace = write(tmp_path / "big.jsonl", lines, {3: text})
    err = replay_error(trace, tmp_path, capsys)
    assert err == (
        f'behaviortk replay: error: {trace} line 4: "tick" must be a whole number 0 to '
        f"2,147,483,647, got {shown}"
    )


def test_a_number_json_cannot_read_is_one_line(lines: list[Any], tmp_path: Path) -> None:
    text = json.dumps(lines[1], separators=(",", ":"))
    trace = write(tmp_path / "long.jsonl", lines, {1: text.replace("0.1", "9" * 5000, 1)})
    with pytest.raises(TraceError) as err:
        open_recording(trace).state(0)
    assert str(err.value).startswith(f"{trace} line 2: not JSON: Exceeds the limit (4300 digits)")


# every JSON value in every agent field and in "time": a state or a located one-line error
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
FIELDS = ["id", "name", "group", "pos", "vel", "active", "status"]


@FAST
@given(agent=st.integers(0, 2), key=st.sampled_from([*FIELDS, "time"]), value=json_values)
def test_any_value_in_any_field_gives_a_state_or_a_located_error(
    lines: list[Any], tmp_path: Path, agent: int, key: str, value: Any
) -> None:
    data = json.loads(json.dumps(lines))
    if key == "time":
        data[1]["time"] = value
    else:
        data[1]["agents"][agent][key] = value
    trace = write(tmp_path / "any.jsonl", data)
    rec = open_recording(trace)
    try:
        state = rec.state(0)
    except TraceError as exc:
        message = str(exc)
        assert message.startswith(f"{trace} line 2: ") and "\n" not in message
        assert len(message) < len(str(trace)) + 200
        return
    assert state.ids.tolist() == [a["id"] for a in data[1]["agents"]]


@FAST
@given(st.lists(st.integers(min_value=-(10**25), max_value=10**25), min_size=1, max_size=3))
def test_any_ticks_open_or_give_a_located_error(
    lines: list[Any], tmp_path: Path, ticks: list[int]
) -> None:
    data = [lines[0], *([lines[1]] * len(ticks)), lines[-1]]
    texts = {
        k + 1: json.dumps(lines[1], separators=(",", ":")).replace('"tick":0', f'"tick":{t}')
        for k, t in enumerate(ticks)
    }
    trace = write(tmp_path / "ticks.jsonl", data, texts)
    fits = all(0 <= t <= MAX_TRACE_TICK for t in ticks) and ticks == sorted(set(ticks))
    if fits:
        assert open_recording(trace).ticks.tolist() == ticks
        return
    with pytest.raises(TraceError) as err:
        open_recording(trace)
    assert str(err.value).startswith(f"{trace} line ") and "\n" not in str(err.value)


# ------------------------------------------------------------------ Parquet
@pytest.fixture
def parquet(tmp_path: Path) -> Path:
    path = tmp_path / "walk.parquet"
    sim = walk_sim("batch")
    run_recorded(sim, 4, ParquetTraceWriter(str(path), sim))
    return path


def rewritten(path: Path, index: Any = None, ids: list[int] | None = None) -> Path:
    """``path`` written again with another tick index (JSON text) or ``id`` column."""
    import pyarrow as pa

    table = pq.read_table(path)
    meta = dict(pq.read_metadata(path).metadata)  # the index is file metadata
    if index is not None:
        meta[META_INDEX.encode()] = index.encode()
    if ids is not None:
        table = table.set_column(1, "id", pa.array(ids, type=pa.int64()))
    out = path.with_name("damaged.parquet")
    pq.write_table(table.replace_schema_metadata(meta), out)
    return out


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (
            '{"ticks":[0,1,2,1180591620717411303424],"row_groups":[0]}',
            '"ticks" must be a list of whole numbers 0 to 2,147,483,647, got an entry '
            "1180591620717411303424",
        ),
        (
            '{"ticks":[0,1,2,3],"row_groups":[1180591620717411303424]}',
            '"row_groups" must be a list of whole numbers 0 to 3, got an entry '
            "1180591620717411303424",
        ),
        ('{"ticks":[0,1,2,3.5],"row_groups":[0]}', '"ticks" must be a list of whole numbers'),
        ('{"ticks":[0,1,[2],3],"row_groups":[0]}', "got an entry [2]"),
        ('{"ticks":5,"row_groups":[0]}', '"ticks" must be a list of whole numbers 0 to'),
        ('{"row_groups":[0]}', "got nothing"),
        ("[1]", "the tick index must be an object, got [1]"),
        ('{"ticks":[0,1,2,3],"row_groups":[2]}', "the tick index does not match"),
    ],
)
def test_a_damaged_tick_index_is_one_line(
    parquet: Path, tmp_path: Path, capsys: Any, index: str, message: str
) -> None:
    damaged = rewritten(parquet, index=index)
    err = replay_error(damaged, tmp_path, capsys)
    assert err.startswith(f"behaviortk replay: error: {damaged}: ") and message in err


def test_a_repeated_id_is_one_line(lines: list[Any], tmp_path: Path) -> None:
    trace = write(tmp_path / "twice.jsonl", with_agent_field(lines, 0, "id", 1))
    with pytest.raises(TraceError) as err:
        open_recording(trace).state(0)
    assert str(err.value) == f"{trace} line 2: tick 0: agent id 1 appears more than once"


def test_damaged_rows_name_the_row_group(parquet: Path, tmp_path: Path, capsys: Any) -> None:
    n = pq.read_metadata(parquet).num_rows
    damaged = rewritten(parquet, ids=[-5] * n)
    err = replay_error(damaged, tmp_path, capsys)
    assert err == (
        f"behaviortk replay: error: {damaged} row group 0: tick 0: agent ids must be >= 0, got -5"
    )


# ------------------------------------------------------------------ --select, --tick
@pytest.mark.parametrize("select", ["²", "٣", "9" * 5000, "-1", " 1"])
def test_select_takes_names_or_ascii_ids(
    parquet: Path, tmp_path: Path, capsys: Any, select: str
) -> None:
    err = replay_error(parquet, tmp_path, capsys, "--select", select)
    assert err.startswith(f"behaviortk replay: error: no agent {select[:20]!r}"[:50])
    assert err.endswith(f"at tick 0 of {parquet}")


def test_tick_past_what_a_trace_holds_is_a_usage_error(parquet: Path, capsys: Any) -> None:
    assert main(["replay", str(parquet), "--tick", "99999999999999999999"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("argument --tick: must be <= 2,147,483,647, got '99999999999999999999'\n")
