"""The identity-provider mock (mock type ``oauth``): an OAuth 2.0 / OpenID Connect provider.

Owns: the ``oauth`` config block (:mod:`oidc.config`), the IdP error classes
(:mod:`oidc.errors`), the process signing key (:mod:`oidc.keys`), the runtime token store
(:mod:`oidc.store`), token contents (:mod:`oidc.tokens`), the oauthlib request validator
(:mod:`oidc.validator`), the compiled provider with its endpoints (:mod:`oidc.provider`), the
engine compiler (:mod:`oidc.engine`) and the ``mockd oauth add`` command (:mod:`oidc.cli`).

Key types: :class:`~oidc.config.OAuthConfig`, :class:`~oidc.provider.IdentityProvider`,
:class:`~oidc.store.TokenStore`, :class:`~oidc.keys.SigningKey`.

Who may call it: the engine's protocol registry calls :data:`oidc.engine.HANDLER`
when it compiles a snapshot; the CLI imports :mod:`oidc.cli`. Everything but ``apps.py`` is
Django-free (an import-linter contract in ``pyproject.toml`` checks it).

Concurrency: single owner, the engine event loop. Keys, codes and tokens live in memory in
the engine's ``protocol_state`` under the mock's id, so snapshot recompiles keep them and
deleting the mock frees them; no locks.
"""
