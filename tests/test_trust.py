"""``_trust``, the one rule for what may be run, loaded or believed, on real files: real
owners (``chown`` to another uid), real modes, sticky directories, symbolic links owned
by others, loops, missing components. Every verdict is the module's stated rule; no
path makes it raise."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hostile import NULL_BYTE, OTHER_UID, THIRD_UID, reachable, shared_dir
from triton_toolchain.runtime import _trust

UNTRUSTED = _trust.UNTRUSTED


def mine(path: Path, mode: int = 0o755) -> Path:
    """A directory of this user, nobody else may write."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(mode)
    return path


def a_file(path: Path, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    path.chmod(mode)
    return path


def verdict(path: Path | str, *, container: bool = False) -> str | None:
    return _trust.untrusted(str(path), container=container)


# ---------------------------------------------------------------------- owners and modes


def test_a_file_only_this_user_can_change_is_trusted(tmp_path: Path) -> None:
    tool = a_file(mine(tmp_path / "bin") / "ptxas", 0o755)
    assert verdict(tool) is None
    assert _trust.resolve(str(tool)) == (str(tool), None)


@pytest.mark.parametrize(
    ("what", "mode", "says"),
    [
        ("file", 0o646, "writable by everyone"),
        ("file", 0o777, "writable by everyone"),
        ("directory", 0o777, "writable by everyone"),
        ("directory", 0o757, "writable by everyone"),
    ],
)
def test_writable_by_everyone_is_not_trusted(
    tmp_path: Path, what: str, mode: int, says: str
) -> None:
    directory = mine(tmp_path / "d")
    tool = a_file(directory / "ptxas")
    (tool if what == "file" else directory).chmod(mode)
    target = tool if what == "file" else directory
    assert verdict(tool) == f"{UNTRUSTED}{what} {target} is {says}"


@pytest.mark.root
def test_owned_by_another_user_is_not_trusted(tmp_path: Path) -> None:
    directory = mine(tmp_path / "d")
    tool = a_file(directory / "ptxas")
    os.chown(tool, OTHER_UID, OTHER_UID)
    group = f"group (gid {OTHER_UID})"
    assert (
        verdict(tool) == f"{UNTRUSTED}file {tool} is owned by uid {OTHER_UID}, {group}, mode 0644"
    )
    os.chown(tool, 0, 0)
    os.chown(directory, OTHER_UID, OTHER_UID)
    assert verdict(tool) == (
        f"{UNTRUSTED}directory {directory} is owned by uid {OTHER_UID}, {group}, mode 0755"
    )


@pytest.mark.root
def test_group_writable_is_trusted_only_for_the_owners_private_group(tmp_path: Path) -> None:
    """root's group ``root`` has no other member: a private group. A group without a
    name (gid 4242) is nobody's private group."""
    tool = a_file(mine(tmp_path / "d") / "ptxas", 0o664)
    assert verdict(tool) is None  # root:root, and root has no other member
    os.chown(tool, 0, OTHER_UID)
    assert verdict(tool) == (
        f"{UNTRUSTED}file {tool} is writable by its group (gid {OTHER_UID}), mode 0664"
    )
    tool.chmod(0o644)
    assert verdict(tool) is None  # the group may not write: whose group it is is moot


def test_a_directory_above_is_judged_as_well(tmp_path: Path) -> None:
    top = mine(tmp_path / "top")
    tool = a_file(mine(top / "a" / "b") / "ptxas")
    top.chmod(0o777)
    assert verdict(tool) == f"{UNTRUSTED}directory {top} is writable by everyone"


# ---------------------------------------------------------------------- sticky directories


@pytest.mark.root
def test_a_sticky_directory_is_passed_on_the_way_but_judged_as_the_last_component(
    tmp_path: Path,
) -> None:
    """As ``/tmp``: others may add entries there but not replace ours; a file of ours in
    it is trusted, the directory itself is not when its contents are used, and is as a
    container the caller makes its own file in (``lock -o``, the cache)."""
    sticky = shared_dir(tmp_path / "sticky", sticky=True)
    ours = a_file(sticky / "ptxas")
    assert verdict(ours) is None
    assert verdict(sticky) == f"{UNTRUSTED}directory {sticky} is writable by everyone"
    assert verdict(sticky, container=True) is None
    theirs = a_file(sticky / "theirs")
    os.chown(theirs, OTHER_UID, OTHER_UID)
    assert verdict(theirs) == (
        f"{UNTRUSTED}file {theirs} is owned by uid {OTHER_UID}, group (gid {OTHER_UID}), mode 0644"
    )


def test_a_plain_world_writable_directory_is_no_container(tmp_path: Path) -> None:
    shared = shared_dir(tmp_path / "shared", sticky=False)
    assert (
        verdict(shared, container=True) == f"{UNTRUSTED}directory {shared} is writable by everyone"
    )


# ---------------------------------------------------------------------- symbolic links


def test_links_are_followed_and_their_targets_judged(tmp_path: Path) -> None:
    safe = mine(tmp_path / "safe")
    real = a_file(safe / "real" / "ptxas")
    (safe / "relative").symlink_to("real/ptxas")
    (safe / "absolute").symlink_to(real)
    (safe / "dir").symlink_to(safe / "real")
    for link in ("relative", "absolute", "dir/ptxas"):
        assert _trust.resolve(str(safe / link)) == (str(real), None), link
        assert _trust.real_path(str(safe / link)) == os.path.realpath(safe / link)
    shared = shared_dir(tmp_path / "shared", sticky=False)
    a_file(shared / "ptxas")
    (safe / "out").symlink_to(shared / "ptxas")
    assert verdict(safe / "out") == f"{UNTRUSTED}directory {shared} is writable by everyone"


@pytest.mark.root
def test_a_link_owned_by_another_user_is_not_trusted_even_to_a_trusted_file(
    tmp_path: Path,
) -> None:
    """In a sticky directory another user's link may be pointed anywhere at any time."""
    reachable(tmp_path)
    real = a_file(mine(tmp_path / "safe") / "ptxas")
    sticky = shared_dir(tmp_path / "sticky", sticky=True)
    link = sticky / "ptxas"
    link.symlink_to(real)
    assert verdict(link) is None
    os.lchown(link, OTHER_UID, OTHER_UID)
    assert verdict(link) == f"{UNTRUSTED}symbolic link {link} is owned by uid {OTHER_UID}"


def test_a_link_loop_and_a_long_chain(tmp_path: Path) -> None:
    d = mine(tmp_path / "d")
    (d / "a").symlink_to("b")
    (d / "b").symlink_to("a")
    assert verdict(d / "a") == f"{d / 'a'}: too many levels of symbolic links"
    real = a_file(d / "real")
    previous = real
    for n in range(_trust.MAX_LINKS):
        (d / f"l{n}").symlink_to(previous.name)
        previous = d / f"l{n}"
    assert verdict(previous) is None  # MAX_LINKS links: as the kernel, followed
    (d / "one-more").symlink_to(previous.name)
    assert verdict(d / "one-more") == f"{d / 'one-more'}: too many levels of symbolic links"


# ---------------------------------------------------------------------- paths that cannot be walked


def test_what_cannot_be_examined_is_not_trusted(tmp_path: Path) -> None:
    d = mine(tmp_path / "d")
    tool = a_file(d / "ptxas")
    missing = d / "nothing" / "ptxas"
    real, problem = _trust.resolve(str(missing))
    assert real == os.path.realpath(missing)
    assert problem == f"{missing} cannot be examined: No such file or directory"
    (d / "dangling").symlink_to(d / "gone")
    assert verdict(d / "dangling") == (
        f"{d / 'dangling'} cannot be examined: No such file or directory"
    )
    through_a_file = tool / "x"
    assert _trust.resolve(str(through_a_file)) == (
        str(through_a_file),
        f"{through_a_file}: {tool} is not a directory",
    )
    assert verdict("bin/ptxas") == "bin/ptxas is not an absolute path"
    named = f"'{d}/pt\\x00xas' cannot be examined: "
    said = verdict(f"{d}/pt\0xas")
    assert said.startswith(named) and re.fullmatch(NULL_BYTE, said[len(named) :]), said


def test_dot_and_dot_dot_are_walked_as_the_kernel_does(tmp_path: Path) -> None:
    d = mine(tmp_path / "d")
    tool = a_file(d / "ptxas")
    shared = shared_dir(d / "shared", sticky=False)
    assert _trust.resolve(f"{d}/./shared/../ptxas") == (
        str(tool),
        f"{UNTRUSTED}directory {shared} is writable by everyone",
    )
    assert _trust.resolve(f"{d}/./ptxas") == (str(tool), None)


def test_entry_problem_judges_one_status(tmp_path: Path) -> None:
    sticky = shared_dir(tmp_path / "sticky", sticky=True)
    st = os.stat(sticky)
    assert _trust.entry_problem(str(sticky), st, directory=True) is None
    assert _trust.entry_problem(str(sticky), st, directory=True, sticky_ok=False) == (
        f"{UNTRUSTED}directory {sticky} is writable by everyone"
    )
    assert _trust.entry_problem(str(sticky), st, directory=False) == (
        f"{UNTRUSTED}directory {sticky} is writable by everyone"
    )


# ---------------------------------------------------------------------- walks sharing one view


@pytest.mark.root
def test_walks_that_share_a_view_judge_as_a_fresh_walk_does(tmp_path: Path) -> None:
    """One ``Looks`` serves every walk of a resolution (and of a record's verification);
    a walk starts in the deepest directory an earlier one passed. What lies below it,
    links owned by others, absolute link targets and ``..`` are still judged: each
    verdict equals that of a walk with a view of its own."""
    reachable(tmp_path)
    safe = tmp_path / "safe" / "a" / "b"
    safe.mkdir(parents=True)
    (safe / "ok").write_text("")
    shared = shared_dir(safe / "shared", sticky=False)
    (shared / "f").write_text("")
    open_dir = shared_dir(tmp_path / "open", sticky=False)
    (open_dir / "f").write_text("")
    (safe / "abs").symlink_to(open_dir / "f")
    (safe / "back").symlink_to(safe / "ok")
    theirs = shared_dir(tmp_path / "sticky", sticky=True)  # as /tmp: theirs to add to
    os.symlink(safe / "ok", theirs / "link")
    os.lchown(theirs / "link", OTHER_UID, OTHER_UID)
    (safe / "via").symlink_to(theirs / "link")
    (theirs / "mine").write_text("")
    paths = [
        theirs / "mine",  # passes the sticky directory on the way
        theirs,  # but whose contents are used, it is judged as what it names
        safe / "ok",
        safe / "shared" / "f",
        safe / "abs",
        safe / "back",
        safe / "via",
        safe / "shared" / ".." / "ok",
        tmp_path / "open" / "f",
        safe / "missing",
    ]
    shared_view = _trust.Looks()
    for path in paths * 2:  # the second round starts where the first passed
        together = _trust.resolve(str(path), shared_view)
        alone = _trust.resolve(str(path), _trust.Looks())
        assert together == alone, path
    mine_, sticky, ok, in_shared, absolute, back, via, dotdot, in_open, missing = (
        _trust.untrusted(str(p), shared_view) for p in paths
    )
    assert mine_ is None and ok is None and back is None
    assert sticky == f"not trusted: directory {theirs} is writable by everyone"
    assert in_shared == f"not trusted: directory {shared} is writable by everyone"
    assert dotdot == in_shared  # `..` out of the shared directory went through it
    assert absolute == in_open == f"not trusted: directory {open_dir} is writable by everyone"
    assert via == f"not trusted: symbolic link {theirs / 'link'} is owned by uid {OTHER_UID}"
    assert missing is not None and "cannot be examined" in missing


def test_a_view_remembers_what_it_saw(tmp_path: Path) -> None:
    """One view is one moment: a change after a look is not seen by that view (a
    resolution judges the filesystem as it was when it looked), a fresh view sees it."""
    tool = a_file(mine(tmp_path / "d") / "ptxas")
    view = _trust.Looks()
    assert _trust.untrusted(str(tool), view) is None
    tool.chmod(0o666)
    assert _trust.untrusted(str(tool), view) is None
    assert _trust.untrusted(str(tool), _trust.Looks()) == (
        f"{UNTRUSTED}file {tool} is writable by everyone"
    )


# ---------------------------------------------------------------------- the allow-list


@pytest.mark.root  # files of another owner (chown)
def test_an_allow_list_admits_whom_it_names_and_nobody_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``TRITON_TOOLCHAIN_TRUSTED_OWNERS`` admits the owners and ``%groups`` it names, by
    id or name; another owner, another group and everyone stay refused."""
    tool = a_file(mine(tmp_path / "d") / "ptxas")
    os.chown(tool, OTHER_UID, OTHER_UID)
    owned = f"{UNTRUSTED}file {tool} is owned by uid {OTHER_UID}, group (gid {OTHER_UID}), mode "
    monkeypatch.setenv(_trust.TRUSTED_OWNERS, f"{THIRD_UID}, %{THIRD_UID}")
    assert verdict(tool) == f"{owned}0644"
    monkeypatch.setenv(_trust.TRUSTED_OWNERS, f"{OTHER_UID} %{THIRD_UID}")
    assert verdict(tool) is None
    tool.chmod(0o664)
    assert verdict(tool) == (
        f"{UNTRUSTED}file {tool} is writable by its group (gid {OTHER_UID}), mode 0664"
    )
    monkeypatch.setenv(_trust.TRUSTED_OWNERS, f"{OTHER_UID},%{OTHER_UID}")
    assert verdict(tool) is None
    tool.chmod(0o666)
    assert verdict(tool) == f"{UNTRUSTED}file {tool} is writable by everyone"
    monkeypatch.setenv(_trust.TRUSTED_OWNERS, "root,%root,no-such-user-here")
    tool.chmod(0o644)
    assert verdict(tool) == f"{owned}0644"
    listed = _trust.allow_list("root,%root,no-such-user-here", _trust.TRUSTED_OWNERS)
    assert (list(listed.uids), list(listed.gids), listed.unknown) == (
        [0],
        [0],
        ["no-such-user-here"],
    )


@pytest.mark.root  # files of another owner (chown)
def test_a_manifests_allow_list_is_replaced_not_added_to(tmp_path: Path) -> None:
    tool = a_file(mine(tmp_path / "d") / "ptxas")
    os.chown(tool, OTHER_UID, OTHER_UID)
    try:
        assert _trust.admit(f"{OTHER_UID} %{THIRD_UID}") == [f"u{OTHER_UID}", f"g{THIRD_UID}"]
        assert verdict(tool) is None
        assert _trust.explain(str(tool)) == (
            f"trusted: uid {OTHER_UID} is listed in the manifest's trusted_owners"
        )
        assert _trust.admit(str(THIRD_UID)) == [f"u{THIRD_UID}"]
        assert verdict(tool) is not None and "is owned by uid 4242" in verdict(tool)
    finally:
        _trust.admit("")


@pytest.mark.root  # files of another owner (chown)
def test_each_refusal_has_the_fix_of_its_cause(tmp_path: Path) -> None:
    """An owner outside the set: the allow-list, never ``chmod``; a group that may write:
    that group and both fixes; everyone: ``chmod go-w`` or a safe place."""
    tool = a_file(mine(tmp_path / "d") / "ptxas")
    os.chown(tool, OTHER_UID, OTHER_UID)
    owner = _trust.fix_for(verdict(tool) or "")
    assert f"add {OTHER_UID} to {_trust.TRUSTED_OWNERS}" in owner and "chmod" not in owner
    os.chown(tool, 0, OTHER_UID)
    tool.chmod(0o664)
    group = _trust.fix_for(verdict(tool) or "")
    assert f"chmod g-w {tool}" in group and f"add %{OTHER_UID} to {_trust.TRUSTED_OWNERS}" in group
    tool.chmod(0o666)
    assert _trust.fix_for(verdict(tool) or "") == _trust.FIX
