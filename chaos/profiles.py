"""The ten named chaos profiles: ready-made global fault configs.

A profile is global faults only (latency, error rate, bandwidth; latency and bandwidth with
probability 1.0); applying one replaces the whole chaos config and enables it.

========================  ===========================================  ============  =====================  =======
name                      description                                  latency ms    errors                 bytes/s
========================  ===========================================  ============  =====================  =======
``slow-api``              Simulates slow upstream API                  500-2000
``degraded``              Partially degraded service                   200-800       0.05 [503]
``flaky``                 Unreliable service with random errors        0-100         0.20 [500,502,503]
``offline``               Service completely down                                    1.0 [503]
``timeout``               Connection timeout simulation                30000-30000
``rate-limited``          Rate-limited API                             50-200        0.30 [429]
``mobile-3g``             Mobile 3G network conditions                 300-800       0.02 [503]             51200
``satellite``             Satellite internet simulation                600-2000      0.05 [503]             20480
``dns-flaky``             Intermittent DNS resolution failures                       0.10 [503]
``overloaded``            Overloaded server under heavy load           1000-5000     0.15 [500,502,503,504] 102400
========================  ===========================================  ============  =====================  =======

Source: behavior notes §11 (profile table), §1 "Chaos" (``GET /chaos/profiles`` sorted by
name; unknown name -> 404 ``chaos profile not found: <name>``). Django-free.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chaos.config import ChaosConfig


@dataclass(frozen=True)
class Profile:
    """One named profile.

    Attributes:
        name: the profile's name (``slow-api``).
        description: one line saying what it simulates.
        config: the chaos config it applies (enabled, global faults only).
    """

    name: str
    description: str
    config: ChaosConfig

    def document(self) -> dict[str, Any]:
        """``{name, description, config}`` as the admin API answers it."""
        return {"name": self.name, "description": self.description,
                "config": self.config.document()}


def _profile(name: str, description: str, latency: tuple[int, int] | None = None,
             errors: tuple[float, list[int]] | None = None,
             bytes_per_second: int | None = None) -> Profile:
    document: dict[str, Any] = {"enabled": True}
    if latency is not None:
        document["latency"] = {"min": latency[0], "max": latency[1], "probability": 1.0}
    if errors is not None:
        document["errorRate"] = {"probability": errors[0], "statusCodes": errors[1]}
    if bytes_per_second is not None:
        document["bandwidth"] = {"bytesPerSecond": bytes_per_second, "probability": 1.0}
    return Profile(name, description, ChaosConfig.model_validate(document))


#: Every profile by name (latency in ms).
PROFILES: dict[str, Profile] = {profile.name: profile for profile in (
    _profile("slow-api", "Simulates slow upstream API", latency=(500, 2000)),
    _profile("degraded", "Partially degraded service", latency=(200, 800),
             errors=(0.05, [503])),
    _profile("flaky", "Unreliable service with random errors", latency=(0, 100),
             errors=(0.20, [500, 502, 503])),
    _profile("offline", "Service completely down", errors=(1.0, [503])),
    _profile("timeout", "Connection timeout simulation", latency=(30_000, 30_000)),
    _profile("rate-limited", "Rate-limited API", latency=(50, 200), errors=(0.30, [429])),
    _profile("mobile-3g", "Mobile 3G network conditions", latency=(300, 800),
             errors=(0.02, [503]), bytes_per_second=51_200),
    _profile("satellite", "Satellite internet simulation", latency=(600, 2000),
             errors=(0.05, [503]), bytes_per_second=20_480),
    _profile("dns-flaky", "Intermittent DNS resolution failures", errors=(0.10, [503])),
    _profile("overloaded", "Overloaded server under heavy load", latency=(1000, 5000),
             errors=(0.15, [500, 502, 503, 504]), bytes_per_second=102_400),
)}


class UnknownProfile(LookupError):
    """No profile has this name; ``str()`` is ``chaos profile not found: <name>``."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"chaos profile not found: {name}")


def get_profile(name: str) -> Profile:
    """The profile called ``name``; raises :class:`UnknownProfile`."""
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownProfile(name) from None


def profile_documents() -> list[dict[str, Any]]:
    """``[{name, description, config}]`` sorted by name."""
    return [PROFILES[name].document() for name in sorted(PROFILES)]
