"""The timeline's one list of sections: every format renders it, in an order that names every section,
and none of them works anything out again."""

from __future__ import annotations

import io
from typing import get_args

import pytest

from conftest import EXAMPLE, analysis_of
from omlx_logscan.analysis import attribution, investigation
from omlx_logscan.inputs.oshistory import load_history
from omlx_logscan.output import phrases, sections
from omlx_logscan.output.documents import timeline_document
from omlx_logscan.output.markdown import timeline_markdown
from omlx_logscan.output.report import REPORT_ORDER, build_report
from omlx_logscan.output.text import TEXT_ORDER, console, timeline_text


@pytest.mark.parametrize("order", [TEXT_ORDER, REPORT_ORDER], ids=["text", "report"])
def test_each_order_names_every_section_once(order: tuple[type[sections.Section], ...]) -> None:
    assert sorted(cls.__name__ for cls in order) == sorted(cls.__name__ for cls in get_args(sections.Section))


def test_the_list_holds_each_section_once_in_the_timelines_order() -> None:
    history = load_history([EXAMPLE.parent / "os-history.txt"], [], None, use_system=False)
    found = investigation.investigation_of(analysis_of(EXAMPLE), history)
    listed = [type(section) for section in sections.timeline_sections(found)]
    assert listed == [cls for cls in get_args(sections.Section) if cls is not sections.Probes]


def test_renderers_format_and_do_not_analyse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the sections are built, no format attributes a fault or works out the escalation again."""
    listed = sections.timeline_sections(investigation.investigation_of(analysis_of(EXAMPLE)))

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a renderer analysed")

    for module, name in ((attribution, "explain"), (investigation, "explain"), (phrases, "escalation_rows")):
        monkeypatch.setattr(module, name, refused)
    monkeypatch.setattr(phrases, "crash_rows", refused)
    out = io.StringIO()
    timeline_text(listed, console(out))
    rendered = [out.getvalue(), timeline_markdown(listed), build_report(listed)]
    document = timeline_document(listed)
    assert all("Timeout" in text for text in rendered)
    assert len(document["faults"]) == 6 and all("attribution" in fault for fault in document["faults"])
