"""``_discovery._search``, the one search runner, on real files: steps run in order,
paths that do not exist skipped but listed, a file reached twice (through a link)
judged once, refused candidates never judged, an advised-against build kept aside, and
the history of earlier sources carried into the ``Choice``.

The checks here are the tests' own (a check is a parameter of the runner): they record
what they were asked and accept what the test says."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tool_fixtures import fake_host
from triton_toolchain.resolver._discovery._host import Host
from triton_toolchain.resolver._discovery._search import (
    Candidate,
    Context,
    Step,
    Verdict,
    discovered,
    first,
    key_of,
    search,
)
from triton_toolchain.resolver._model import Rejection, Source, SourceKind


def step_of(*candidates: Candidate) -> Step:
    """A discovery step proposing ``candidates``."""

    def step(host: Host, ctx: Context) -> Iterable[Candidate]:
        del host, ctx
        return candidates

    return step


class Judge:
    """A check that records the paths it judged and gives each path's verdict."""

    def __init__(self, verdicts: dict[Path, Verdict]) -> None:
        self.verdicts = verdicts
        self.judged: list[Path] = []

    def __call__(self, path: Path) -> Verdict:
        self.judged.append(path)
        return self.verdicts.get(path, Verdict(problem="not this one"))


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    return path


def test_steps_run_in_order_and_the_first_accepted_wins(tmp_path: Path) -> None:
    host = fake_host(tmp_path)
    a, b, c = (touch(tmp_path / n / "ptxas") for n in ("a", "b", "c"))
    missing = tmp_path / "missing" / "ptxas"
    judge = Judge({b: Verdict("12.8"), c: Verdict("13.0")})
    choice = search(
        "ptxas",
        [step_of(discovered("one", missing), discovered("one", a)), step_of(discovered("two", b))],
        judge,
        host,
        Context(),
    )
    assert (choice.path, choice.version) == (str(b), "12.8")
    assert choice.source == Source(SourceKind.DISCOVERED, "two")
    assert judge.judged == [a, b]  # the missing path was not judged; c was never reached
    assert choice.searched == (
        f"discovered:one: {missing}",
        f"discovered:one: {a}",
        f"discovered:two: {b}",
    )
    assert choice.rejected == (Rejection(str(a), "not this one", discovered("one", a).source),)


def test_nothing_accepted_gives_no_path_and_the_whole_history(tmp_path: Path) -> None:
    a = touch(tmp_path / "a" / "ptxas")
    earlier = Rejection("/m/ptxas", "gone", Source(SourceKind.MANIFEST, "/etc/m.json"))
    choice = search(
        "ptxas",
        [step_of(discovered("one", a))],
        Judge({}),
        fake_host(tmp_path),
        Context(),
        rejected=[earlier],
        searched=["manifest:/etc/m.json: /m/ptxas"],
        notes=["a note"],
    )
    assert (choice.path, choice.version, choice.source) == (None, None, None)
    assert choice.rejected == (
        earlier,
        Rejection(str(a), "not this one", discovered("one", a).source),
    )
    assert choice.searched == ("manifest:/etc/m.json: /m/ptxas", f"discovered:one: {a}")
    assert choice.notes == ("a note",)


def test_a_file_reached_twice_is_judged_once(tmp_path: Path) -> None:
    """A link (``/usr/local/cuda`` -> ``cuda-13.0``) and its target are one file."""
    real = touch(tmp_path / "cuda-13.0" / "bin" / "ptxas")
    (tmp_path / "cuda").symlink_to("cuda-13.0")
    via_link = tmp_path / "cuda" / "bin" / "ptxas"
    assert key_of(via_link) == key_of(real) == real
    judge = Judge({})
    choice = search(
        "ptxas",
        [step_of(discovered("link", via_link), discovered("real", real))],
        judge,
        fake_host(tmp_path),
        Context(),
    )
    assert judge.judged == [via_link]
    assert [r.path for r in choice.rejected] == [str(via_link)]
    assert len(choice.searched) == 2


def test_a_refused_candidate_is_never_judged_and_reported_only_when_something_is_there(
    tmp_path: Path,
) -> None:
    """A path reached through an empty ``PATH`` entry: the runner reports it, never
    judges it, and goes on."""
    planted = touch(tmp_path / "cwd" / "ptxas")
    good = touch(tmp_path / "bin" / "ptxas")
    source = Source(SourceKind.DISCOVERED, "PATH")
    refused = Candidate(planted, source, refused="an empty PATH entry")
    nothing = Candidate(tmp_path / "none" / "ptxas", source, refused="an empty PATH entry")
    judge = Judge({good: Verdict("13.0")})
    choice = search(
        "ptxas",
        [step_of(nothing, refused, discovered("PATH", good))],
        judge,
        fake_host(tmp_path),
        Context(),
    )
    assert choice.path == str(good) and judge.judged == [good]
    assert choice.rejected == (Rejection(str(planted), "an empty PATH entry", source),)
    assert first([step_of(nothing, refused)], fake_host(tmp_path), Context()) is None
    assert first([step_of(nothing, discovered("x", good))], fake_host(tmp_path), Context()) == good


def test_an_advised_against_build_is_taken_only_when_nothing_better_is_found(
    tmp_path: Path,
) -> None:
    advised, fine = touch(tmp_path / "a" / "ptxas"), touch(tmp_path / "b" / "ptxas")
    verdicts = {advised: Verdict("12.3", advised_against=True, note="a known-bad build")}
    both = [step_of(discovered("one", advised), discovered("two", fine))]
    choice = search(
        "ptxas", both, Judge({**verdicts, fine: Verdict("13.0")}), fake_host(tmp_path), Context()
    )
    assert (choice.path, choice.notes) == (str(fine), ())
    choice = search("ptxas", both, Judge(verdicts), fake_host(tmp_path), Context(), notes=["n"])
    assert (choice.path, choice.version) == (str(advised), "12.3")
    assert choice.notes == ("n", "a known-bad build")  # the verdict's note follows
    assert choice.rejected == (
        Rejection(str(fine), "not this one", discovered("two", fine).source),
    )


def test_first_is_the_first_existing_candidate_search_would_judge(tmp_path: Path) -> None:
    a = touch(tmp_path / "a" / "ptxas")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    steps = [step_of(discovered("x", tmp_path / "none")), step_of(discovered("y", a))]
    assert first(steps, fake_host(tmp_path), Context()) == a
    # A dangling link is something there: search judges it (and rejects it).
    dangling = [step_of(discovered("x", tmp_path / "dangling"), discovered("y", a))]
    assert first(dangling, fake_host(tmp_path), Context()) == tmp_path / "dangling"
    assert first([], fake_host(tmp_path), Context()) is None
