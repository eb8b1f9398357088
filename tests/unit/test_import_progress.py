"""Progress of an import: the import path's stage callback (``progress(stage, done,
total)``), the importers' per-item counts, and when ``mockd import`` may draw a bar."""
from __future__ import annotations

import io
import json
import os
import pty

import pytest

from mocks.cli_portability import ImportProgress, draws_progress, post_config
from mocks.portability.importers import STAGES, ImportOptions, import_document, import_path
from mocks.portability.importers.result import REPORT_EVERY
from tests.large_openapi import openapi_document, write_openapi


class Recorder:
    """A stage callback that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int | None]] = []

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        self.calls.append((stage, done, total))

    def stages(self) -> list[str]:
        order: list[str] = []
        for stage, _, _ in self.calls:
            if not order or order[-1] != stage:
                order.append(stage)
        return order

    def counts(self, stage: str) -> list[int]:
        return [done for name, done, _ in self.calls if name == stage]


def assert_well_formed(recorder: Recorder) -> None:
    """Stages in order, each seen once; counts never go down; each stage ends complete."""
    order = recorder.stages()
    assert order == [stage for stage in STAGES if stage in order]
    for stage in order:
        counts = recorder.counts(stage)
        assert counts == sorted(counts), (stage, counts)
        last = [call for call in recorder.calls if call[0] == stage][-1]
        assert last[1] == last[2], (stage, last)


def test_import_path_reports_every_stage_with_increasing_convert_counts(tmp_path):
    spec = write_openapi(tmp_path / "api.json", 2 * REPORT_EVERY + 50)
    recorder = Recorder()
    result = import_path(spec, progress=recorder, compile=False)
    assert recorder.stages() == ["read", "parse", "convert", "check"]
    assert_well_formed(recorder)
    size = spec.stat().st_size
    assert recorder.counts("read") == [0, size]
    converted = recorder.counts("convert")
    assert converted[0] == 0
    # Intermediate counts: the importer reports while it works, not only at the end.
    assert [count for count in converted if 0 < count < len(result.mocks)] == \
        [REPORT_EVERY, 2 * REPORT_EVERY]
    assert converted[-1] == len(result.mocks) == 2 * REPORT_EVERY + 50
    assert recorder.calls[-1] == ("check", len(result.mocks), len(result.mocks))


def test_import_document_text_has_no_read_stage():
    recorder = Recorder()
    import_document(json.dumps(openapi_document(3)), progress=recorder)
    assert recorder.stages() == ["parse", "convert", "check"]
    assert_well_formed(recorder)


def test_import_without_check_ends_with_convert():
    recorder = Recorder()
    import_document(json.dumps(openapi_document(3)), progress=recorder, check=False)
    assert recorder.stages() == ["parse", "convert"]


def test_har_progress_counts_entries_even_when_some_make_no_mock():
    entries = [{"request": {"method": "GET", "url": f"http://x/a{index % 3}"},
                "response": {"status": 200, "headers": [], "content": {}}}
               for index in range(REPORT_EVERY + 10)]
    recorder = Recorder()
    result = import_document(json.dumps({"log": {"version": "1.2", "entries": entries}}),
                             progress=recorder)
    assert len(result.mocks) == 3
    assert_well_formed(recorder)
    assert recorder.counts("convert") == [0, 0, REPORT_EVERY, REPORT_EVERY + 10,
                                          REPORT_EVERY + 10]


def test_wiremock_directory_progress_counts_files(tmp_path):
    for index in range(3):
        (tmp_path / f"m{index}.json").write_text(json.dumps(
            {"request": {"method": "GET", "url": f"/m{index}"}, "response": {"status": 200}}))
    recorder = Recorder()
    import_path(tmp_path, progress=recorder)
    assert recorder.stages() == ["parse", "convert", "check"]
    assert_well_formed(recorder)
    assert recorder.counts("convert")[-1] == 3


def test_import_options_report_only_every_step_and_the_last():
    seen: list[tuple[int, int]] = []
    options = ImportOptions(progress=lambda done, total: seen.append((done, total)))
    for done in range(2 * REPORT_EVERY + 6):
        options.report(done, 2 * REPORT_EVERY + 5)
    assert seen == [(0, 2 * REPORT_EVERY + 5), (REPORT_EVERY, 2 * REPORT_EVERY + 5),
                    (2 * REPORT_EVERY, 2 * REPORT_EVERY + 5),
                    (2 * REPORT_EVERY + 5, 2 * REPORT_EVERY + 5)]
    ImportOptions().report(1, 1)  # no callback: nothing to do


class Uploads:
    """Stands in for :class:`ImportProgress`: keeps the upload counts."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def upload(self, done: int, total: int) -> None:
        self.calls.append((done, total))


class AnsweringClient:
    def request(self, method, path, **kwargs):
        return {"version": "1.0", "mocks": []} if method == "GET" else {"imported": 1}


def test_post_config_reports_one_request_when_small():
    uploads = Uploads()
    post_config(AnsweringClient(), {"version": "1.0", "mocks": []}, False, uploads)
    assert uploads.calls == [(0, 1), (1, 1)]


def test_post_config_reports_each_batch(monkeypatch):
    monkeypatch.setattr("mocks.cli_portability.MAX_REQUEST_BYTES", 2000)
    document = {"version": "1.0", "mocks": [{"id": f"m{index}", "http": {
        "matcher": {"path": f"/m{index}"}, "response": {"body": "x" * 300}}}
        for index in range(12)]}
    uploads = Uploads()
    post_config(AnsweringClient(), document, False, uploads)
    batches = uploads.calls[-1][1]
    assert batches > 1
    assert uploads.calls == [(number, batches) for number in range(batches + 1)]


@pytest.mark.parametrize("environ", [
    pytest.param({}, id="plain pipe"),
    pytest.param({"FORCE_COLOR": "1"}, id="FORCE_COLOR does not make a pipe a terminal"),
    pytest.param({"TTY_COMPATIBLE": "1"}, id="TTY_COMPATIBLE does not either"),
])
def test_draws_progress_never_on_a_pipe(monkeypatch, environ):
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    read_end, write_end = os.pipe()
    os.close(read_end)
    with open(write_end, "w") as stream:
        assert not draws_progress(stream)
    assert not draws_progress(io.StringIO())


@pytest.mark.parametrize("term, expected", [
    pytest.param("xterm-256color", True, id="a terminal"),
    pytest.param("dumb", False, id="TERM=dumb"),
])
def test_draws_progress_on_a_terminal_unless_dumb(monkeypatch, term, expected):
    monkeypatch.setenv("TERM", term)
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    master, slave = pty.openpty()
    try:
        with open(slave, "w") as stream:
            assert draws_progress(stream) is expected
    finally:
        os.close(master)


def test_import_progress_without_a_terminal_draws_nothing():
    stream = io.StringIO()
    with ImportProgress(delay=0.0, stream=stream) as progress:
        progress("convert", 5, 10)
        progress.upload(1, 1)
    assert stream.getvalue() == ""
    assert progress.seconds >= 0
