"""``symshape check --format github`` appends a Markdown job summary (one table: each export,
its status, where it is declared, its contract or violations, the fixes) to the file named
by ``GITHUB_STEP_SUMMARY`` when that is set, as GitHub Actions steps do."""
from repo_paths import REPO
import os

from symshape.cli import main
from symshape.cli.summary import _cell, _code



def rows(text):
    return [[c.strip() for c in l.strip().strip("|").split(" | ")]
            for l in text.splitlines() if l.startswith("| `")]


def test_zoo_summary_table(capsys, monkeypatch, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["check", "--format", "github", "examples/zoo"]) == 1
    capsys.readouterr()
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## symshape check\n")       # appended
    assert "\n4 exports: 3 ok, 1 failed, 0 errors\n" in text
    assert "| export | status | where | contract / violations | suggested fixes |" in text
    table = rows(text)
    assert [r[0] for r in table] == ["`zoo.head:classify`", "`zoo.attn:block`",
                                     "`zoo.mixer:mix`", "`zoo.pool:pool`"]
    assert all(len(r) == 5 for r in table)
    head, attn = table[0], table[1]
    assert head[1].endswith("ok") and head[3] == "batch = feats.shape[0] in [2, 128]"
    assert head[4] == ""
    assert attn[1].endswith("fail") and attn[2] == "`examples/zoo/zoo/attn.py:20`"
    assert attn[3].startswith("- tokens: the program needs tokens in [2, 128]")
    assert "<br>- mask_tokens must equal tokens" in attn[3]
    assert attn[4] == "`tokens = Dim('tokens', max=128)`<br>`mask_tokens = tokens`"
    assert "symshape check --fix" in text


def test_no_summary_without_the_variable_or_in_other_formats(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["check", "--format", "github", "examples/zoo"]) == 1      # nothing to write
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["check", "examples/zoo"]) == 1                           # text format
    capsys.readouterr()
    assert not summary.exists()


def test_unwritable_summary_is_reported_not_fatal(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no" / "such" / "dir.md"))
    assert main(["check", "--format", "github", "examples/zoo"]) == 1
    err = capsys.readouterr().err
    assert "could not write the job summary to $GITHUB_STEP_SUMMARY" in err


def test_cells_stay_one_cell():
    assert _cell("a | b\nc") == "a \\| b<br>c"
    assert _code("n = Dim('n')") == "`n = Dim('n')`"
    assert _code("uses `x`") == "`` uses `x` ``"
