"""The match stage: the method + path index over candidates, and near misses.

Source: SPEC "Matcher" and "Matching rules"; behavior notes §4 (no-match answer, near misses)
and §5 (precedence, points). STYLE §3: the serving loop and the near-miss explanation run the
*same* condition objects.
"""
from __future__ import annotations

import bisect
import operator
from typing import Any, Iterable, Sequence

from mocks.core import scores
from mocks.core.request import MockRequest
from mocks.protocols.http.conditions import Condition, MethodCondition
from mocks.protocols.http.matcher import Candidate


class Match:
    """A served match: the winning candidate and its path captures (read-only by contract;
    a plain slotted class because a frozen dataclass costs twice as much to create)."""

    __slots__ = ("candidate", "path_params")

    def __init__(self, candidate: Candidate, path_params: dict[str, str]):
        self.candidate = candidate
        self.path_params = path_params

    def __repr__(self) -> str:
        return f"Match({self.candidate.mock_id!r}, {self.path_params!r})"


class MatchIndex:
    """Finds the winning candidate without scanning every mock.

    Tiers, most specific first: exact path (dict keyed by path), path patterns (scanned),
    template paths (keyed by segment count and first literal segment), then globs and
    path-less mocks (scanned). Each bucket is keyed by method too (``None`` = any method) and presorted by
    :func:`precedence_key`, so within a bucket the first full match is that bucket's best, and a
    tier that yields a match ends the search (every later tier is less specific).
    """

    def __init__(self, candidates: Iterable[Candidate], previous: MatchIndex | None = None):
        """Index ``candidates``. ``previous`` is the index being replaced: per-candidate
        entries it built for the very same candidate objects are reused (an incremental
        recompile keeps unchanged candidates), which keeps a reload of a large config cheap.
        """
        self.exact: dict[tuple[str | None, str], list[Candidate]] = {}
        #: ``(segment count, literal first segment or None) -> entries`` of every method,
        #: presorted by precedence; a literal first segment's list also holds the ``None``
        #: list's entries.
        self.template: dict[tuple[int, str | None], list[_TemplateEntry]] = {}
        self.pattern: dict[str | None, list[Candidate]] = {}
        self.glob: dict[str | None, list[Candidate]] = {}
        self.pathless: dict[str | None, list[Candidate]] = {}
        self.candidates = sorted(candidates, key=lambda candidate: candidate.key)
        #: Every literal path of the exact tier: one string lookup rules the tier out.
        self.exact_paths: frozenset[str] = frozenset()
        #: ``id(candidate) -> entry`` of the template tier, for the next index to reuse (the
        #: entry holds its candidate, so an id is never confused with a new object's).
        self.template_entries: dict[int, _TemplateEntry] = {}
        reusable = previous.template_entries if previous is not None else {}
        # `get` before creating a bucket: `setdefault(key, [])` would allocate a list per
        # candidate, and with 10,000 mocks those allocations alone trigger collections.
        exact, template = self.exact, self.template
        for candidate in self.candidates:
            matcher = candidate.matcher
            method = matcher.method
            condition = matcher.path_condition
            specificity = matcher.specificity
            if specificity == scores.SPECIFICITY_EXACT:
                key = (method, condition.form.literal)
                bucket = exact.get(key)
                if bucket is None:
                    exact[key] = [candidate]
                else:
                    bucket.append(candidate)
            elif specificity == scores.SPECIFICITY_TEMPLATE:
                form = condition.form
                entry = reusable.get(id(candidate))
                if entry is None or entry.candidate is not candidate:
                    entry = _TemplateEntry(candidate)
                self.template_entries[id(candidate)] = entry
                key = (form.segment_count, form.first_segment)
                entries = template.get(key)
                if entries is None:
                    template[key] = [entry]
                else:
                    entries.append(entry)
            elif specificity == scores.SPECIFICITY_PATTERN:
                self.pattern.setdefault(method, []).append(candidate)
            elif specificity == scores.SPECIFICITY_GLOB:
                self.glob.setdefault(method, []).append(candidate)
            else:
                self.pathless.setdefault(method, []).append(candidate)
        self.exact_paths = frozenset(path for _, path in self.exact)
        # A path whose first segment has its own bucket may also match the templates with a
        # parameter there: merge those in, keeping precedence order (keys are unique).
        for (count, first), entries in self.template.items():
            if first is not None:
                entries.extend(self.template.get((count, None), ()))
                entries.sort(key=lambda entry: entry.key)

    def patched(self, removed: Sequence[Candidate], added: Sequence[Candidate]) -> MatchIndex:
        """A new index over ``self.candidates`` minus ``removed`` plus ``added``, built by
        copying only the buckets those candidates touch (``self`` stays valid for the requests
        still reading it). Serves exactly as ``MatchIndex(...)`` over the same candidates
        would. Keys are unique, so every bucket is found and kept sorted by bisection.

        Raises ``ValueError`` when a removed candidate is not in the index.
        """
        new = MatchIndex.__new__(MatchIndex)
        new.exact, new.template = dict(self.exact), dict(self.template)
        new.pattern, new.glob, new.pathless = (dict(self.pattern), dict(self.glob),
                                               dict(self.pathless))
        new.template_entries = dict(self.template_entries)
        copied: set[tuple[int, Any]] = set()

        def writable(tier: dict[Any, list[Any]], key: Any) -> list[Any]:
            # Copy-on-write: a bucket is copied once per patch, the first time it changes.
            marker = (id(tier), key)
            if marker in copied and key in tier:
                return tier[key]
            bucket = list(tier.get(key, ()))
            tier[key] = bucket
            copied.add(marker)
            return bucket

        def take_out(tier: dict[Any, list[Any]], key: Any, item: Any) -> None:
            bucket = writable(tier, key)
            position = bisect.bisect_left(bucket, item.key, key=_key_of)
            if position >= len(bucket) or bucket[position] is not item:
                raise ValueError(f"candidate {getattr(item, 'mock_id', item)!r} is not indexed")
            del bucket[position]
            if not bucket:
                del tier[key]

        def put_in(tier: dict[Any, list[Any]], key: Any, item: Any) -> None:
            bisect.insort(writable(tier, key), item, key=_key_of)

        candidates = list(self.candidates)
        for candidate in removed:
            position = bisect.bisect_left(candidates, candidate.key, key=_key_of)
            if position >= len(candidates) or candidates[position] is not candidate:
                raise ValueError(f"candidate {candidate.mock_id!r} is not indexed")
            del candidates[position]
            tier, key = new._tier_of(candidate)
            if tier is not new.template:
                take_out(tier, key, candidate)
                continue
            entry = new.template_entries.pop(id(candidate))
            count, first = key
            targets = [key] if first is not None else [
                other for other in new.template if other[0] == count]
            for target in targets:
                take_out(new.template, target, entry)
        for candidate in added:
            bisect.insort(candidates, candidate, key=_key_of)
            tier, key = new._tier_of(candidate)
            if tier is not new.template:
                put_in(tier, key, candidate)
                continue
            entry = new.template_entries.get(id(candidate))
            if entry is None or entry.candidate is not candidate:
                entry = _TemplateEntry(candidate)
            new.template_entries[id(candidate)] = entry
            count, first = key
            if first is not None and key not in new.template:
                # A new first segment starts with the entries that have a parameter there.
                new.template[key] = list(new.template.get((count, None), ()))
                copied.add((id(new.template), key))
            targets = [key] if first is not None else [
                other for other in new.template if other[0] == count] or [key]
            if key not in targets:
                targets.append(key)
            for target in targets:
                put_in(new.template, target, entry)
        new.candidates = candidates
        new.exact_paths = (frozenset(map(operator.itemgetter(1), new.exact))
                           if new.exact.keys() != self.exact.keys() else self.exact_paths)
        return new

    def _tier_of(self, candidate: Candidate) -> tuple[dict[Any, list[Any]], Any]:
        """``(tier dict, bucket key)`` of ``candidate``, as :meth:`__init__` files it."""
        matcher = candidate.matcher
        specificity = matcher.specificity
        if specificity == scores.SPECIFICITY_EXACT:
            return self.exact, (matcher.method, matcher.path_condition.form.literal)
        if specificity == scores.SPECIFICITY_TEMPLATE:
            form = matcher.path_condition.form
            return self.template, (form.segment_count, form.first_segment)
        if specificity == scores.SPECIFICITY_PATTERN:
            return self.pattern, matcher.method
        if specificity == scores.SPECIFICITY_GLOB:
            return self.glob, matcher.method
        return self.pathless, matcher.method

    def find(self, request: MockRequest) -> Match | None:
        """The winning match for ``request``, or None."""
        method = request.method
        path = request.path
        if path in self.exact_paths:
            exact = self.exact
            best = _best_exact(exact.get((method, path)), exact.get((None, path)), request)
            if best:
                return best
        pattern = self.pattern
        if pattern:
            best = _best_of(request, pattern.get(method), pattern.get(None))
            if best:
                return best
        template = self.template
        if template:
            count = path.count("/") + 1
            slash = path.find("/", 1)
            bucket = (template.get((count, path[1:] if slash < 0 else path[1:slash]))
                      or template.get((count, None)))
            if bucket:
                # One list holds this first segment's entries and the ones with a parameter
                # there, in precedence order: the first full match wins.
                for entry in bucket:
                    if entry.method is not None and entry.method != method:
                        continue
                    prefix = entry.prefix
                    if prefix is not None:
                        # The bucket fixed the segment count: the rest is one segment.
                        if not path.startswith(prefix) or len(path) == entry.prefix_length:
                            continue
                        params = {entry.name: path[entry.prefix_length:]}
                    else:
                        found = entry.fullmatch(path)
                        if found is None:
                            continue
                        params = dict(zip(entry.names, found.groups()))
                    if entry.residual and not all_hold(entry.residual, request):
                        continue
                    return Match(entry.candidate, params)
        for tier in (self.glob, self.pathless):
            if tier:
                best = _best_of(request, tier.get(method), tier.get(None))
                if best:
                    return best
        return None


_NO_PARAMS: dict[str, str] = {}


def _key_of(item: Any) -> tuple[int, int, int, int]:
    """The precedence key of a candidate or a template entry (the sort key of every bucket)."""
    return item.key


def _best_exact(with_method: list[Candidate] | None, any_method: list[Candidate] | None,
                request: MockRequest) -> Match | None:
    """Best of the two exact-path buckets, checking only each matcher's residual conditions."""
    best: Candidate | None = None
    if with_method:
        for candidate in with_method:
            if all_hold(candidate.matcher.residual, request):
                best = candidate
                break
    if any_method:
        for candidate in any_method:
            if best is not None and candidate.key >= best.key:
                break
            if all_hold(candidate.matcher.residual, request):
                best = candidate
                break
    return Match(best, _NO_PARAMS) if best is not None else None


class _TemplateEntry:
    """A candidate of the ``{param}`` tier, unpacked for the serving loop.

    The bucket already guarantees the segment count and the literal first segment; the
    path regex captures the parameters (``[^/]+`` groups never miss, so no ``None`` fix-up),
    and ``residual`` holds the conditions other than the method and the path.
    """

    __slots__ = ("candidate", "key", "method", "fullmatch", "names", "residual", "prefix",
                 "prefix_length", "name")

    def __init__(self, candidate: Candidate):
        matcher = candidate.matcher
        path_condition = matcher.path_condition
        form = path_condition.form
        self.candidate = candidate
        self.key = candidate.key
        self.method = matcher.method
        self.fullmatch = form.regex.fullmatch
        self.names = form.names
        #: ``/api/users/`` of ``/api/users/{id}``: matched by a prefix test, not the regex.
        self.prefix = form.last_parameter_prefix
        self.prefix_length = len(self.prefix or "")
        self.name = form.names[0]
        self.residual = tuple(condition for condition in matcher.conditions
                              if condition is not path_condition
                              and not isinstance(condition, MethodCondition))


def all_hold(conditions: tuple[Condition, ...], request: MockRequest) -> bool:
    """Whether every condition holds for ``request`` (stops at the first miss); the index
    calls it with the conditions its bucket keys cannot vouch for."""
    for condition in conditions:
        if not condition.evaluate(request).matched:
            return False
    return True


def _best_of(request: MockRequest, *buckets: list[Candidate] | None) -> Match | None:
    best: Match | None = None
    for bucket in buckets:
        if not bucket:
            continue
        for candidate in bucket:
            if best is not None and candidate.key >= best.candidate.key:
                break  # the bucket is sorted: nothing later can beat the best so far
            captures = candidate.matcher.match(request)
            if captures is not None:
                best = Match(candidate, captures)
                break
    return best


# --------------------------------------------------------------------------- near misses


def _join_fields(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return ", ".join(names[:-1]) + f", and {names[-1]}"


def near_misses(candidates: Iterable[Candidate], request: MockRequest,
                limit: int = 3) -> list[dict[str, Any]]:
    """The top ``limit`` near misses for an unmatched request (behavior notes §4).

    Returns a list of ``{mockId, mockName?, score, maxPossibleScore, matchPercentage, reason,
    fields: [{field, matched, score, maxScore, expected?, actual?, details?}]}`` for enabled
    HTTP mocks with at least one matched field, ordered by score then percentage.
    """
    # Rank every mock by score first (cheap: no explanation text), then explain only the
    # winners. With 1,000 mocks an unmatched request costs a fraction of explaining them all.
    ranked = []
    for order, candidate in enumerate(candidates):
        score, any_matched = candidate.matcher.quick_score(request)
        if any_matched:
            percentage = score * 100 // (candidate.matcher.max_score or 1)
            ranked.append((-score, -percentage, order, candidate))
    ranked.sort(key=lambda row: row[:3])
    return [_explain_near_miss(candidate, request) for *_, candidate in ranked[:limit]]


def _explain_near_miss(candidate: Candidate, request: MockRequest) -> dict[str, Any]:
    """One near-miss row: ``{mockId, mockName?, score, maxPossibleScore, matchPercentage,
    reason, fields}`` (behavior notes §4)."""
    score, results = candidate.matcher.explain(request)
    matched_fields = [condition.field for condition, result in results if result.matched]
    max_score = candidate.matcher.max_score or 1
    percentage = score * 100 // max_score
    first_miss = next((result.mismatch for _, result in results if not result.matched), None)
    if first_miss is None:
        reason = "all specified fields matched"
    else:
        reason = f"{_join_fields(_unique(matched_fields))} matched, but {first_miss}"
    fields = []
    for condition, result in results:
        entry: dict[str, Any] = {"field": condition.field, "matched": result.matched,
                                 "score": result.score, "maxScore": condition.max_score}
        if result.expected is not None:
            entry["expected"] = result.expected
        if result.actual is not None:
            entry["actual"] = result.actual
        if result.details is not None:
            entry["details"] = result.details
        fields.append(entry)
    miss: dict[str, Any] = {"mockId": candidate.mock_id}
    if candidate.name:
        miss["mockName"] = candidate.name
    miss.update(score=score, maxPossibleScore=candidate.matcher.max_score,
                matchPercentage=percentage, reason=reason, fields=fields)
    return miss


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for name in names:
        seen.setdefault(name, None)
    return list(seen)
