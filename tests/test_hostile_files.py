"""Files and folders that fail under the library: a delete into a trash that
cannot be written, of files another window already deleted, an undo whose trashed file is gone, and
an export into the results folder itself. Each is said to the user; nothing is raised or duplicated.

Root passes permission checks, so the unwritable trash here is one no user can create: a regular
file named ``.trash`` where the folder would go (mkdir fails with EEXIST, as it fails with EROFS or
EACCES on a read-only folder)."""

from __future__ import annotations

from pathlib import Path

import pytest
from reports_data import make_doc, write_docs

from hwbench_gui.engine.results import library
from hwbench_gui.ui.context import AppContext


def _two(folder):
    return write_docs(folder, [make_doc("t.rate"), make_doc("t.latency", minutes=1)])


def test_delete_and_restore_report_each_file_they_could_not_move(tmp_path):
    results = tmp_path / "results"
    first, second = _two(results)
    second.unlink()  # another window deleted it
    moved, failed = library.delete_to_trash([first, second], results)
    assert [m.original for m in moved] == [first] and moved[0].trashed.parent == library.trash_dir(results)
    assert [(e.path, e.reason) for e in failed] == [
        (second, "is gone already (deleted or moved by another window or program)")]
    moved[0].trashed.unlink()  # emptied from the trash meanwhile
    restored, failed = library.restore(moved)
    assert restored == [] and [e.path for e in failed] == [moved[0].trashed]


def test_delete_into_a_trash_that_cannot_be_made_moves_nothing_and_says_why(tmp_path):
    results = tmp_path / "results"
    files = _two(results)
    library.trash_dir(results).write_text("in the way")
    moved, failed = library.delete_to_trash(files, results)
    assert moved == [] and [e.path for e in failed] == files
    assert failed[0].reason.startswith(f"cannot be moved to the trash ({library.trash_dir(results)}): ")
    assert all(f.exists() for f in files)


def test_export_never_writes_a_document_twice(tmp_path):
    results = tmp_path / "results"
    _two(results)
    docs = library.list_results(results).docs
    exported = library.export_documents(docs, results)  # into the results folder itself
    assert exported.written == [] and len(exported.already_present) == 2
    assert len(library.list_results(results).docs) == 2
    elsewhere = tmp_path / "out"
    first = library.export_documents(docs, elsewhere)
    again = library.export_documents(docs + docs, elsewhere)
    assert len(first.written) == 2 and again.written == [] and len(again.already_present) == 4
    assert len(list(elsewhere.glob("*.json"))) == 2


@pytest.fixture
def tab(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.reports import ReportsTab

    results = tmp_path / "results"
    _two(results)
    messages = []
    context = AppContext(settings=qsettings, results_dir=results,
                         show_status=lambda message, timeout_ms=0: messages.append(message))
    widget = ReportsTab(context)
    qtbot.addWidget(widget)
    assert widget.wait_loaded()
    widget.reference_check.setChecked(False)
    widget.messages = messages
    widget.results = results
    yield widget
    widget.shutdown()


def test_gui_delete_of_files_already_gone_or_into_an_unwritable_trash_shows_why(tab):
    tab.select_rows([0, 1])
    for doc in tab.selected_documents():
        Path(doc["_path"]).unlink()  # another window deleted them
    assert tab.delete_selected() == []
    assert "Not deleted: 2 file(s)" in tab.messages[-1]
    assert tab.errors_label.text().startswith("Not deleted:\n") and "is gone already" in tab.errors_label.text()
    assert not tab.undo_button.isEnabled()


def test_gui_delete_into_an_unwritable_trash_keeps_the_files(tab):
    library.trash_dir(tab.results).write_text("in the way")
    tab.select_rows([0])
    assert tab.delete_selected() == []
    assert "cannot be moved to the trash" in tab.errors_label.text()
    assert len(tab.documents()) == 2


def test_gui_undo_of_a_file_emptied_from_the_trash_shows_why(tab):
    tab.select_rows([0])
    (moved,) = tab.delete_selected()
    moved.trashed.unlink()
    assert tab.undo_delete() == []
    assert "Not restored" in tab.messages[-1] and "is gone already" in tab.errors_label.text()


def test_gui_export_into_the_results_folder_duplicates_nothing(tab):
    tab.select_rows([0, 1])
    assert tab.export_selected(tab.results) == []
    assert tab.messages[-1] == f"Exported 0 result(s) to {tab.results}; 2 already there, not written twice"
    assert len(tab.documents()) == 2


def test_gui_library_shows_the_others_beside_a_number_beyond_float_range(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.reports import ReportsTab

    results = tmp_path / "results"
    _two(results)
    hostile = make_doc("t.rate", minutes=2)
    hostile["figure"]["value"] = 123456.789
    (results / "huge.json").write_text(library.dumps(hostile).replace("123456.789", "1" + "0" * 400))
    widget = ReportsTab(AppContext(settings=qsettings, results_dir=results, show_status=lambda *a: None))
    qtbot.addWidget(widget)
    assert widget.wait_loaded()
    widget.reference_check.setChecked(False)
    assert len(widget.documents()) == 2
    assert "huge.json: not a result document (an integer of 401 digits" in widget.errors_label.text()
    widget.shutdown()
