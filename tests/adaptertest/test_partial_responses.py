"""Errors keep what was done (upstream's rule): a failed ``run`` hands back the Response it
has with its error (``RunError(response=...)``), keeping the observations it emitted, and
a valid checkpoint beside an error counts as invalid."""

from __future__ import annotations

import pytest

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from driver import EventSink, Request, Response, RunError
from referencedriver import ReferenceConfig, ReferenceDriver

JUDGED = ["LIV-01", "FLR-01", "RUN-04", "RSP-01"]


class PartialOnError(ReferenceDriver):
    """A run that fails, then raises RunError carrying the failed Response as it is
    (``keep``), without its transcript, or not at all."""

    keep = "all"

    def __init__(self) -> None:
        super().__init__(ReferenceConfig(fail_run=True))

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        if self.keep == "all":
            raise RunError("the provider connection dropped", response=response)
        if self.keep == "no-transcript":
            dropped = response.model_copy(update={"transcript": []})
            raise RunError("the provider connection dropped", response=dropped)
        raise RunError("the provider connection dropped")


class DropsTranscript(PartialOnError):
    keep = "no-transcript"


class DropsResponse(PartialOnError):
    keep = "nothing"


def check(driver: type[PartialOnError]) -> ConformanceReport:
    options = Options(
        config=ReferenceConfig(fail_run=True),
        live_run=True,
        live_run_timeout=10.0,
        live_expect_failure="the reference config fails every run",
    )
    return check_driver(driver, options, only=JUDGED)


def failed(report: ConformanceReport) -> set[str]:
    return {r.clause for r in report.results if r.status is ClauseStatus.FAILED}


def test_a_partial_response_handed_back_with_the_error_is_judged_and_passes() -> None:
    report = check(PartialOnError)
    assert failed(report) == set()
    for clause in ("FLR-01", "RUN-04", "RSP-01"):
        assert report.result(clause).status is ClauseStatus.PASSED, clause


@pytest.mark.parametrize(
    ("driver", "clauses", "fragment"),
    [
        # The emitted items are missing from the response (RUN-04), and with them the
        # failure item FLR-01 asks for.
        (DropsTranscript, {"RUN-04", "FLR-01"}, "transcript"),
        (DropsResponse, {"FLR-01"}, "RunError(response=...)"),
    ],
)
def test_dropping_what_was_done_fails(
    driver: type[PartialOnError], clauses: set[str], fragment: str
) -> None:
    report = check(driver)
    assert failed(report) == clauses
    first = sorted(clauses)[-1]
    assert fragment in " ".join(report.result(first).messages)
