"""``python -m gpuscan.bench``'s requests: --sizes as ``gpuscan bench`` reads it, and a bad
request refused with exit status 2 before anything runs (no torch needed)."""
import pytest

from gpuscan import bench


def test_sizes_as_the_cli_reads_them():
    assert bench.parse_sizes("10:12") == [1024, 2048, 4096]
    assert bench.parse_sizes("1000,4099") == [1000, 4099]
    assert bench.parse_sizes("12") == [12]


@pytest.mark.parametrize("text", ["x", "3:2", "10:41", "0", "100,,4", "1:x", "-1"])
def test_bad_sizes_are_refused_with_exit_status_2(text, capsys):
    with pytest.raises(SystemExit) as refused:
        bench.main(["--sizes", text])
    assert refused.value.code == 2
    assert f"--sizes '{text}' is neither" in capsys.readouterr().err


def test_a_lone_size_up_to_40_gets_a_note():
    assert "--sizes 12 times n = 12 elements; for 2^12 write --sizes 12:12" == bench.sizes_note("12")
    for text in ("12:12", "41", "5,6", "1000"):
        assert bench.sizes_note(text) is None


@pytest.mark.parametrize("args, message", [
    (["--shapes", "3y4"], "--shapes '3y4' is neither 'table' nor BxN"),
    (["--shapes", "0x64"], "--shapes '0x64'"),
    (["--shapes", "2x3x4"], "--shapes '2x3x4'"),
    (["--runs", "0"], "--runs must be at least 1"),
    (["--warmup", "-1"], "--warmup must be at least 0"),
    (["--overhead", "-5"], "--overhead must be at least 0"),
])
def test_bad_requests_are_refused_with_exit_status_2(args, message, capsys):
    with pytest.raises(SystemExit) as refused:
        bench.main(args)
    assert refused.value.code == 2
    assert message in capsys.readouterr().err


def test_shapes_as_written_or_the_table():
    assert bench.parse_shapes("3x1000,1x7") == [(3, 1000), (1, 7)]
    assert len(bench.parse_shapes("table")) == 7
