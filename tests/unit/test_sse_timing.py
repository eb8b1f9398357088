"""Delay precedence of SSE mocks (behavior notes §9): event ``delay`` > ``perEventDelays[i]``
> ``burst`` > ``randomDelay`` > ``fixedDelay`` > 0, after ``initialDelay`` once."""
from __future__ import annotations

import random

import pytest

from mocks.protocols.streaming.config import SseTimingConfig
from mocks.protocols.streaming.events import CompiledEvent, SseTiming

PLAIN = CompiledEvent()
OWN_DELAY = CompiledEvent(delay_ms=7)
EVERYTHING = {"initialDelay": 300, "fixedDelay": 40, "randomDelay": {"min": 20, "max": 30},
              "burst": {"count": 2, "interval": 5, "pause": 900}, "perEventDelays": [11, 12]}


def timing(**config) -> SseTiming:
    return SseTiming(SseTimingConfig.model_validate(config))


@pytest.mark.parametrize(("config", "event", "position", "expected_ms"), [
    pytest.param(EVERYTHING, OWN_DELAY, 0, 7, id="event delay beats everything"),
    pytest.param(EVERYTHING, PLAIN, 1, 12, id="perEventDelays[i] beats burst"),
    pytest.param(EVERYTHING, PLAIN, 2, 5, id="burst past the perEventDelays list"),
    pytest.param({k: v for k, v in EVERYTHING.items() if k != "burst"}, PLAIN, 5, None,
                 id="randomDelay beats fixedDelay"),
    pytest.param({"fixedDelay": 40}, PLAIN, 3, 40, id="fixedDelay"),
    pytest.param({}, PLAIN, 0, 0, id="nothing configured: no wait"),
    pytest.param({"fixedDelay": 40}, CompiledEvent(delay_ms=0), 0, 0,
                 id="an event delay of 0 still wins"),
])
def test_delay_precedence(config, event, position, expected_ms):
    seconds = timing(**config).delay(event, position, 0, random.Random(1))
    if expected_ms is None:
        assert 0.020 <= seconds <= 0.030
    else:
        assert seconds == pytest.approx(expected_ms / 1000)


def test_initial_delay_is_kept_apart_in_seconds():
    assert timing(initialDelay=250).initial_seconds == pytest.approx(0.25)
    assert timing().initial_seconds == 0


def test_burst_sends_groups_of_count_with_a_pause_between_groups():
    burst = timing(burst={"count": 3, "interval": 10, "pause": 500})
    delays = [burst.delay(PLAIN, position, sent, random.Random(0))
              for sent, position in enumerate(range(7))]
    assert delays == pytest.approx([0.01, 0.01, 0.01, 0.5, 0.01, 0.01, 0.5])


def test_random_delay_stays_within_min_and_max_inclusive():
    spread = timing(randomDelay={"min": 3, "max": 5})
    rng = random.Random(42)
    seen = {round(spread.delay(PLAIN, 10, 0, rng) * 1000) for _ in range(200)}
    assert seen == {3, 4, 5}
