"""Bad scenario and sweep files are refused at load time, in one line naming the file and the key, with the
limit in the message: never a traceback, never a search that runs for ever (issue 13). Also the
``[expect.unexercised]`` table."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from groupcheck.model.scenario import ScenarioError, load_scenario

from groupcheck.cli import main
from groupcheck.sweep import SweepError, load_sweep

ROOT = Path(__file__).resolve().parent.parent
ZOMBIE = (ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml").read_text(encoding="utf-8")
SWEEP = (ROOT / "sweeps" / "fencing.toml").read_text(encoding="utf-8")


def _one_line_exit_2(argv: list[str], path: Path, capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and str(path) in err, err
    for needle in needles:
        assert needle in err, err
    return err


def _scenario(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------ the reproducers


@pytest.mark.parametrize(
    "value",
    ["[" * 3_000 + "]" * 3_000, "{a = " * 3_000 + "1" + "}" * 3_000, "[" * 40 + "]" * 40],
    ids=["arrays", "inline tables", "40 arrays"],
)
def test_deeply_nested_toml_is_one_line(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, ZOMBIE.replace('properties = ["exclusive-fetch"]', f"properties = {value}"))
    for command in ("list", "check"):
        _one_line_exit_2([command, str(path)], path, capsys, "nested too deeply", "at most 16 levels")


def test_deep_dotted_table_header_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, ZOMBIE + "\n[expect.unexercised." + ".".join(["a"] * 3_000) + "]\nx = 1\n")
    _one_line_exit_2(["list", str(path)], path, capsys, "expect.unexercised.a.a", "at most 16 levels")


@pytest.mark.parametrize("char", ["\\u0000", "\\u001b", "\\u007f", "\\u0085", "\\u2028", "\\u202e"])
def test_control_character_in_name_refused_at_load(
    char: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, ZOMBIE.replace('name = "gc-pause-zombie-fetch"', f'name = "gc{char}pause"'))
    _one_line_exit_2(["list", str(path)], path, capsys, "name: must be printable characters only")
    start = time.perf_counter()  # refused before the search (which takes seconds and writes the bundle)
    _one_line_exit_2(["check", str(path), "--out", str(tmp_path / "out")], path, capsys, "name:")
    assert time.perf_counter() - start < 1.0
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["a" * 101, "a" * 300, "慢" * 101, "🙂" * 60])
def test_too_long_name_refused_at_load(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, ZOMBIE.replace('name = "gc-pause-zombie-fetch"', f'name = "{name}"'))
    err = _one_line_exit_2(
        ["check", str(path), "--out", str(tmp_path / "out")], path, capsys, "name: at most 100"
    )
    assert "200 bytes" in err
    assert not (tmp_path / "out").exists()


def test_a_long_name_within_the_limit_is_fine(tmp_path: Path) -> None:
    assert (
        load_scenario(_scenario(tmp_path, ZOMBIE.replace("gc-pause-zombie-fetch", "ü" * 100))).name
        == "ü" * 100
    )


@pytest.mark.parametrize(
    "topic", ['"t\\n0"', '"t\\r0"', '"a b"', '"a/b"', '"."', '".."', '""', '"' + "t" * 250 + '"', '"ü"']
)
def test_bad_topic_name_is_one_line(topic: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, ZOMBIE.replace("t0 = 2", f"{topic} = 2"))
    _one_line_exit_2(["list", str(path)], path, capsys, "group.topics.", "Kafka's rule")


def test_legal_kafka_topic_names_are_fine(tmp_path: Path) -> None:
    sc = load_scenario(_scenario(tmp_path, ZOMBIE.replace("t0 = 2", '"orders.v2-EU_1" = 1, "t" = 1')))
    assert sc.config.topics == (("orders.v2-EU_1", 1), ("t", 1))


def test_five_thousand_topics_refused_at_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topics = ", ".join(f"t{i} = 1" for i in range(5_000))
    path = _scenario(tmp_path, ZOMBIE.replace("t0 = 2", topics))
    start = time.perf_counter()
    _one_line_exit_2(
        ["check", str(path), "--max-states", "2000"],
        path,
        capsys,
        "group.topics: at most 8 topics, got 5,000",
    )
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(
    ("topics", "growth", "message"),
    [
        ("t0 = 8, t1 = 8, t2 = 8, t3 = 8, t4 = 1", 0, "at most 32 partitions in all, got 33"),
        ("t0 = 8, t1 = 8, t2 = 8", 5, "in all, counting the 5 partition_growth adds to each topic, got 39"),
    ],
)
def test_partition_cap(
    topics: str, growth: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ZOMBIE.replace("gc_pauses = 1", f"gc_pauses = 1\npartition_growth = {growth}")
    fine = _scenario(tmp_path, text.replace("t0 = 2", "t0 = 8, t1 = 8"))  # 2 x (8 + 5) = 26
    assert load_scenario(fine).config.slots == 16 + 2 * growth
    path = _scenario(tmp_path, text.replace("t0 = 2", topics))
    _one_line_exit_2(["list", str(path)], path, capsys, "group.topics: at most 32 partitions", message)


def test_huge_integer_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, ZOMBIE.replace("gc_pauses = 1", "gc_pauses = " + "9" * 5_000))
    _one_line_exit_2(["list", str(path)], path, capsys, "invalid TOML")


def test_big_values_are_quoted_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, ZOMBIE.replace("gc_pauses = 1", "gc_pauses = " + "9" * 4_000))
    err = _one_line_exit_2(["list", str(path)], path, capsys, "faults.gc_pauses: must be a whole number")
    assert len(err) < 300, err


def test_property_listed_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    many = "[" + ", ".join(['"exclusive-fetch"'] * 20_000) + "]"
    path = _scenario(tmp_path, ZOMBIE.replace('["exclusive-fetch"]', many))
    _one_line_exit_2(["list", str(path)], path, capsys, "check.properties: lists 'exclusive-fetch' twice")


def test_control_characters_in_description(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, ZOMBIE.replace("The slow consumer", "The \\u001b[2J slow consumer"))
    _one_line_exit_2(["list", str(path)], path, capsys, "description: must not contain control characters")
    ok = _scenario(tmp_path, ZOMBIE.replace("The slow consumer", "The\\tslow\\nconsumer\\r"))
    assert load_scenario(ok).description.startswith("The\tslow\nconsumer\r")


def test_large_file_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, ZOMBIE + "# padding\n" * 200_000)
    _one_line_exit_2(["list", str(path)], path, capsys, "larger than 1,000,000 bytes")


# ------------------------------------------------------------------------------------------- sweeps


def _sweep(tmp_path: Path, raw: bytes) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_bytes(raw)
    return path


def _sweep_refused(path: Path, capsys: pytest.CaptureFixture[str], *needles: str) -> None:
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    assert "\n" not in str(info.value)
    _one_line_exit_2(["sweep", str(path), "--out", str(path.parent / "out")], path, capsys, *needles)


def test_non_utf8_sweep_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _sweep(tmp_path, SWEEP.encode("utf-8").replace(b"fencing", b"fenc\xffing", 1))
    _sweep_refused(path, capsys, "not UTF-8 text")


def test_oversized_grid_refused_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    axes = ["group.consumers", "group.brokers", "group.records_per_partition", "faults.gc_pauses",
            "faults.network_partitions", "check.max_depth"]  # fmt: skip
    grid = "\n".join(f'"{a}" = [{", ".join(str(i) for i in range(1, 31))}]' for a in axes)
    path = _sweep(tmp_path, f'name = "huge"\n[grid]\n{grid}\n'.encode())
    start = time.perf_counter()
    _sweep_refused(path, capsys, "grid: 30 x 30 x 30 x 30 x 30 x 30 = 729,000,000 points", "at most 10,000")
    assert time.perf_counter() - start < 2.0


def test_grid_at_the_cap_loads_and_counts_lazily(tmp_path: Path) -> None:
    grid = (
        '"group.consumers" = [1, 2, 3, 4]\n"check.max_depth" = ['
        + ", ".join(map(str, range(1, 2_501)))
        + "]\n"
    )
    sweep = load_sweep(_sweep(tmp_path, f'name = "big"\n[grid]\n{grid}'.encode()))
    assert sweep.size == 10_000
    first = next(sweep.iter_points())
    assert first == {"group.consumers": 1, "check.max_depth": 1}
    assert len(sweep.points()) == 10_000


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("switch_off = [", '"group.zookeepers" = [1]\nswitch_off = ['),
            "grid.group.zookeepers: zookeepers: unknown key",
        ),
        (("switch_off = [", '"colour" = [1]\nswitch_off = ['), "grid.colour: colour is not a scenario key"),
        (("switch_off = [", '"faults.gc_pauses" = [1]\nswitch_off = ['), "inside the axis grid.faults"),
        (("switch_off = [", '"protocol.x" = [1]\nswitch_off = ['), "protocol is not a table"),
        (("switch_off = [", '"group.topics.a b" = [1]\nswitch_off = ['), "Kafka's rule"),
        (('"group.consumers" = [1, 2]', '"group.consumers" = [1, 2, 1]'), "lists 1 twice"),
        (
            ('"group.consumers" = [1, 2]', '"group.consumers" = [2024-01-01]'),
            "dates and times are not scenario values",
        ),
        (('name = "fencing"', 'name = "' + "f" * 96 + '"'), "name: at most 95 characters"),
        (('name = "fencing"', 'name = "fen\\u0000cing"'), "name: must be printable"),
        (("[base]", "[base]\ncolour = 1"), "colour: unknown key"),
        (("records_per_partition = 1", "records_per_partition = 99"), "records_per_partition"),
        (
            ("[grid]", "[grid]\n" + "\n".join(f'"group.topics.x{i}" = [1]' for i in range(20))),
            "at most 16 axes",
        ),
    ],
)
def test_sweep_refused_at_load(
    edit: tuple[str, str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert edit[0] in SWEEP
    path = _sweep(tmp_path, SWEEP.replace(edit[0], edit[1], 1).encode("utf-8"))
    _sweep_refused(path, capsys, message)


def test_deeply_nested_sweep_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _sweep(
        tmp_path,
        SWEEP.replace(
            '"group.consumers" = [1, 2]', '"group.consumers" = ' + "[" * 5_000 + "]" * 5_000
        ).encode(),
    )
    _sweep_refused(path, capsys, "nested too deeply")


def test_catalogue_sweep_still_loads() -> None:
    sweep = load_sweep(ROOT / "sweeps" / "fencing.toml")
    assert sweep.size == len(sweep.points()) == 60


# ----------------------------------------------------------------------------------- expect.unexercised

UNEXERCISED_BASE = ZOMBIE.replace(
    "gc_pauses = 1", "gc_pauses = 1\ncoordinator_failovers = 1\nfailover_phase = 2"
) + ("\n[switches]\nmember_id_check = false\n")


def test_unexercised_items_exposed_sorted(tmp_path: Path) -> None:
    text = UNEXERCISED_BASE + (
        "\n[expect.unexercised]\n"
        '"switch:member_id_check" = "no commit reaches the coordinator"\n'
        '"fault:gc_pauses" = """the pause\n   cannot matter"""\n'
        '"failover_phase" = "phase 2 is never reached"\n'
    )
    sc = load_scenario(_scenario(tmp_path, text))
    assert sc.unexercised == (
        ("failover_phase", "phase 2 is never reached"),
        ("fault:gc_pauses", "the pause cannot matter"),
        ("switch:member_id_check", "no commit reaches the coordinator"),
    )
    assert load_scenario(ROOT / "specs" / "teaching" / "gc-pause-zombie-fetch.toml").unexercised == ()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('"fault:network_partitions" = "x"', "faults.network_partitions is 0 in this scenario"),
        ('"fault:nonsense" = "x"', "unknown fault 'nonsense'"),
        ('"switch:commit_generation_fencing" = "x"', "switches.commit_generation_fencing is on"),
        ('"switch:nonsense" = "x"', "unknown switch 'nonsense'"),
        ('"gc_pauses" = "x"', 'items are "fault:<fault>", "switch:<switch>", "failover_phase"'),
        ('"fault:gc_pauses" = ""', "the reason must not be empty"),
        ('"fault:gc_pauses" = "  \\n "', "the reason must not be empty"),
        ('"fault:gc_pauses" = 3', "the reason must be a string"),
        ('"fault:gc_pauses" = "a\\u0000b"', "the reason must not contain control characters"),
        ('"fault:gc_pauses" = "' + "x" * 1_001 + '"', "the reason at most 1,000 characters"),
        ('"fault:gc_pauses\\n" = "x"', "expect.unexercised.'fault:gc_pauses\\n': unknown fault"),
    ],
)
def test_unexercised_validated(
    entry: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, UNEXERCISED_BASE + f"\n[expect.unexercised]\n{entry}\n")
    _one_line_exit_2(["list", str(path)], path, capsys, "expect.unexercised.", message)


def test_unexercised_failover_phase_needs_a_pinned_phase(tmp_path: Path) -> None:
    path = _scenario(tmp_path, ZOMBIE + '\n[expect.unexercised]\n"failover_phase" = "x"\n')
    with pytest.raises(ScenarioError, match=r"only with faults\.failover_phase set"):
        load_scenario(path)
    path = _scenario(tmp_path, ZOMBIE.replace("[expect]", "[expect]\nunexercised = 3"))
    with pytest.raises(ScenarioError, match=r"expect\.unexercised: must be a table"):
        load_scenario(path)


def test_every_catalogue_scenario_loads() -> None:
    for path in sorted((ROOT / "specs").rglob("*.toml")):
        load_scenario(path)
