"""`make test` checks the system programs first: it installs them as root, or says what to do."""

from __future__ import annotations

import shutil

from tools import system_tools


def test_a_machine_without_bwrap_is_told_in_one_line_what_to_install(monkeypatch, capsys):
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "bwrap" else real_which(name))
    monkeypatch.setattr(system_tools, "can_install", lambda: False)  # not root
    assert system_tools.main() == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bwrap" in err and "apt-get install bubblewrap" in err


def test_as_root_the_missing_package_is_installed(monkeypatch, capsys):
    installed = []
    present = set(system_tools.NEEDED) - {"chromium"}
    monkeypatch.setattr(
        shutil, "which", lambda name: f"/usr/bin/{name}" if name in present else None
    )
    monkeypatch.setattr(system_tools, "can_install", lambda: True)

    def install(packages):
        installed.extend(packages)
        present.add("chromium")
        return True

    monkeypatch.setattr(system_tools, "install", install)
    assert system_tools.main() == 0
    assert installed == ["chromium"]
