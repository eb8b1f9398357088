"""The RS256 signing key of the engine process, its JWKS entry, signing and verification.

One 2048-bit RSA key is generated the first time an identity-provider mock is compiled and kept
for the life of the engine process, so tokens stay valid across snapshot recompiles (every mock
edit recompiles). It is never written to disk or logged.

With a state store (``--state-store``) every engine of the namespace must sign with the same
key, so :func:`process_signing_key` keeps it in Redis (key ``<namespace>:oidc:signing-key``,
PKCS#8 PEM, no TTL): the first engine to compile an identity-provider mock stores its key if
none is there (``SET NX``) and every engine then uses the stored one. While Redis cannot be
reached the engine keeps (or generates) its own key and logs that once, without the key.

Source: SPEC "Identity-provider endpoints" (RS256 JWTs, 2048-bit key generated at startup,
JWKS shape ``{keys: [{kty: RSA, use: sig, kid, alg: RS256, n, e}]}``), "Limits".

Concurrency: created and used on the engine loop only. Django-free.
"""
from __future__ import annotations

import base64
import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

#: SPEC "Limits": RSA signing key size in bits.
RSA_KEY_BITS = 2048
ALGORITHM = "RS256"


def _base64url_uint(value: int) -> str:
    length = max(1, (value.bit_length() + 7) // 8)
    return base64.urlsafe_b64encode(value.to_bytes(length, "big")).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class SigningKey:
    """An RSA private key with its key id.

    Attributes:
        private_key: the cryptography RSA private key.
        kid: RFC 7638 JWK thumbprint (base64url SHA-256) of the public key; sent in every token
            header and in the JWKS.
        public_jwk: the JWKS entry ``{kty, use, kid, alg, n, e}``.
    """

    private_key: rsa.RSAPrivateKey = field(repr=False)
    kid: str
    public_jwk: dict[str, str]

    @classmethod
    def generate(cls) -> "SigningKey":
        """A fresh 2048-bit key (about 0.1 s of CPU)."""
        return cls.of(rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS))

    @classmethod
    def from_pem(cls, pem: bytes) -> "SigningKey":
        """The key of an unencrypted PKCS#8 PEM (:meth:`pem`); raises ValueError when it is
        not an RSA private key."""
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        private_key = load_pem_private_key(pem, password=None)
        if not isinstance(private_key, rsa.RSAPrivateKey):
            raise ValueError("not an RSA private key")
        return cls.of(private_key)

    def pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM (a secret: never log it)."""
        from cryptography.hazmat.primitives import serialization

        return self.private_key.private_bytes(serialization.Encoding.PEM,
                                              serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption())

    @classmethod
    def of(cls, private_key: rsa.RSAPrivateKey) -> "SigningKey":
        """The :class:`SigningKey` of an RSA private key (kid and JWKS entry computed)."""
        numbers = private_key.public_key().public_numbers()
        modulus, exponent = _base64url_uint(numbers.n), _base64url_uint(numbers.e)
        # RFC 7638: the thumbprint hashes the required members in lexicographic order.
        thumbprint_input = json.dumps({"e": exponent, "kty": "RSA", "n": modulus},
                                      separators=(",", ":"), sort_keys=True)
        kid = base64.urlsafe_b64encode(hashlib.sha256(thumbprint_input.encode()).digest()
                                       ).rstrip(b"=").decode("ascii")
        jwk = {"kty": "RSA", "use": "sig", "kid": kid, "alg": ALGORITHM, "n": modulus,
               "e": exponent}
        return cls(private_key=private_key, kid=kid, public_jwk=jwk)

    def sign(self, claims: dict[str, Any]) -> str:
        """A compact RS256 JWS of ``claims`` with ``kid`` in the header."""
        return jwt.encode(claims, self.private_key, algorithm=ALGORITHM,
                          headers={"kid": self.kid})

    def verify(self, token: str, issuer: str) -> dict[str, Any] | None:
        """The claims of ``token`` when its signature and ``iss`` check out, else None.

        Expiry is not checked here: callers compare ``exp`` themselves so that expired and
        revoked tokens can still be looked up (revocation of an expired token is allowed).
        """
        try:
            claims = jwt.decode(token, self.private_key.public_key(), algorithms=[ALGORITHM],
                                issuer=issuer,
                                options={"verify_exp": False, "verify_aud": False,
                                         "require": ["iss", "jti", "exp"]})
        except jwt.PyJWTError:
            return None
        return claims


_process_key: SigningKey | None = None


_process_pem: bytes | None = None
_warned = False
log = logging.getLogger("mockd.oidc.keys")


def process_signing_key() -> SigningKey:
    """The engine process's key, generated on first use and then kept; with a state store,
    the namespace's key in Redis (see the module docstring: one ``GET`` per call, which is
    made once per compile of an identity-provider mock)."""
    global _process_key, _process_pem, _warned
    from oidc.store import TokenStoreUnavailable, shared_tokens

    shared = shared_tokens()
    if shared is not None:
        def candidate() -> bytes:
            return (_process_key or SigningKey.generate()).pem()

        try:
            pem = shared.signing_key_pem(candidate)
            if pem != _process_pem or _process_key is None:
                _process_key, _process_pem = SigningKey.from_pem(pem), pem
        except (TokenStoreUnavailable, ValueError, TypeError) as error:
            if not _warned:  # the message names the URL (redacted) or the kind of problem
                problem = error if isinstance(error, TokenStoreUnavailable) else \
                    f"the signing key in {shared.key_name} is not an RSA private key"
                log.warning("%s; the identity provider signs with this engine's own key",
                            problem)
                _warned = True
        else:
            _warned = False
            return _process_key
    if _process_key is None:
        _process_key = SigningKey.generate()
    return _process_key
