"""gradacc-certify settings: what a course's certificates state, said once and checked."""

from __future__ import annotations

import pytest
from gradacc_grader.certificates.settings import SETTINGS_FILE, read_settings
from gradacc_grader.certify import main


def test_settings_are_written_once_shown_and_say_what_is_missing(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    assert main(["settings", "--course", str(course), "--issuer", "Ọ̀ṣun Open School"]) == 0
    out = capsys.readouterr().out
    assert "still to give before issuing: --course-title TITLE --verify-url URL" in out
    title = ["--assignment-title", "final", "the final exam"]
    assert main(["settings", "--course", str(course), "--course-title", "Gradacc", *title]) == 0
    settings = read_settings(course)
    assert (settings.issuer, settings.course_title) == ("Ọ̀ṣun Open School", "Gradacc")
    assert settings.title_of("final") == "the final exam" and settings.language == "en"
    assert main(["settings", "--course", str(course)]) == 0  # shows, changes nothing
    assert "issuer            Ọ̀ṣun Open School" in capsys.readouterr().out
    assert read_settings(course) == settings


@pytest.mark.parametrize(
    "content, complaint",
    [
        (b'{"issuer": "A", "colour": "red"}', "unknown settings ['colour']"),
        (b'{"issuer": 3}', "every setting is text"),
        (b'{"issuer": "A",}', "not valid JSON"),
        (b'{"issuer": "A"}\xff', "not UTF-8"),
        (b'{"language": "fr"}', "--language fr: give one of en, yo, both"),
    ],
)
def test_a_settings_file_edited_wrong_says_how(tmp_path, capsys, content, complaint):
    (tmp_path / SETTINGS_FILE).write_bytes(content)
    assert main(["settings", "--course", str(tmp_path)]) == 1
    assert complaint in capsys.readouterr().err


@pytest.mark.parametrize(
    "option, value, complaint",
    [
        ("--verify-url", "http://example.org/verify/", "https://"),
        ("--verify-url", "https://example.org/verify/?x=1", "without ?"),
        ("--course-title", "two\nlines", "one line"),
    ],
)
def test_settings_refuse_what_would_print_wrong(tmp_path, capsys, option, value, complaint):
    (tmp_path / "course").mkdir()
    status = main(["settings", "--course", str(tmp_path / "course"), option, value])
    assert status == 1 and complaint in capsys.readouterr().err
    assert not (tmp_path / "course/certificate-settings.json").exists()
