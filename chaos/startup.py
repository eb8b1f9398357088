"""The chaos config a server starts with: ``serverConfig.chaos`` of the file, then the flags.

Flags (``start``, ``serve``, ``engine``): ``--chaos-enabled``, ``--chaos-latency
10ms-100ms`` (global latency, probability 1.0), ``--chaos-error-rate P`` (global error rate,
status 500 unless the file's ``errorRate`` names codes), ``--chaos-profile NAME`` (a named
profile; exclusive with the other three). Any of them turns chaos on; flags replace the
file's blocks of the same name and keep the rest (rules, seed).

Source: behavior notes §15 (flags; ``--chaos-profile`` exclusive with the others), §14
(``serverConfig.chaos``). Django-free.
"""
from __future__ import annotations

from dataclasses import dataclass

from chaos.config import ChaosConfig, LatencyConfig
from chaos.profiles import get_profile


@dataclass(frozen=True)
class ChaosFlags:
    """The chaos flags of a server command.

    Attributes:
        enabled: ``--chaos-enabled``.
        latency: ``--chaos-latency`` as ``(min ms, max ms)``, or None.
        error_rate: ``--chaos-error-rate`` (0..1), or None.
        profile: ``--chaos-profile`` name (already checked to exist), or None.
    """

    enabled: bool = False
    latency: tuple[int, int] | None = None
    error_rate: float | None = None
    profile: str | None = None

    @property
    def given(self) -> bool:
        """Whether any chaos flag was given."""
        return (self.enabled or self.latency is not None or self.error_rate is not None
                or self.profile is not None)


def startup_chaos(file_config: ChaosConfig | None,
                  flags: ChaosFlags | None) -> ChaosConfig | None:
    """The chaos config to apply at start-up, or None (chaos stays off and unset).

    Raises :class:`~chaos.profiles.UnknownProfile` for an unknown ``flags.profile``.
    """
    if flags is None or not flags.given:
        return file_config
    base = file_config or ChaosConfig()
    if flags.profile is not None:
        profile = get_profile(flags.profile).config
        return profile.model_copy(update={"seed": base.seed}) if base.seed is not None \
            else profile
    update: dict = {"enabled": True}
    if flags.latency is not None:
        update["latency"] = LatencyConfig(min=flags.latency[0], max=flags.latency[1],
                                          probability=1.0)
    if flags.error_rate is not None:
        current = base.error_rate
        update["error_rate"] = (current.model_copy(update={"probability": flags.error_rate})
                                if current is not None
                                else ChaosConfig.model_validate(
                                    {"errorRate": {"probability": flags.error_rate}}).error_rate)
    return base.model_copy(update=update)
