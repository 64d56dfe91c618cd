"""Encrypt what a tenant entrusts to the server (tool and MCP server secrets, OAuth tokens) before it is stored.

Fernet from ``cryptography`` (AES-128-CBC with HMAC-SHA256, authenticated, versioned): a maintained recipe,
not our own assembly of primitives. ``MultiFernet`` over ``COGNIZES_SECRET_KEYS`` (comma-separated Fernet keys,
newest first) rotates keys without downtime: the newest key encrypts, every listed key decrypts, and
``reencrypt`` moves a token to the newest key (``manage.py reencrypt_secrets`` does it for every stored secret;
then the old key can go).

Unset, one key is derived from Django's ``SECRET_KEY`` (HKDF-SHA256 with a salt and label of its own, so the
encryption key is never the signing key itself): an installation works with nothing more to configure, and its
stored secrets are as safe as its ``SECRET_KEY``. To move to keys of one's own, list a new key followed by the
derived one (``manage.py reencrypt_secrets --print-derived-key``), run ``reencrypt_secrets``, then drop the
derived key.

    token = encrypt("s3cret")      # text, safe for any column
    decrypt(token)                 # "s3cret"; UnreadableSecret if no configured key made it
"""

from __future__ import annotations

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

_SALT = b"cognizes.infra.encryption"
_INFO = b"fernet key for stored secrets, v1"


class UnreadableSecret(Exception):
    """A stored token that none of the configured keys opens (a key dropped too early, or a damaged row).

    The message never holds the token or a key: it reaches logs.
    """


def derived_key(secret_key: str) -> str:
    """The Fernet key derived from ``secret_key`` (Django's), used when ``COGNIZES_SECRET_KEYS`` is unset."""
    material = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO).derive(secret_key.encode())
    return base64.urlsafe_b64encode(material).decode()


def configured_keys() -> tuple[str, ...]:
    """The keys in use, newest first: ``COGNIZES_SECRET_KEYS``, or the one derived from ``SECRET_KEY``."""
    keys = tuple(getattr(settings, "COGNIZES_SECRET_KEYS", None) or ())
    return keys or (derived_key(settings.SECRET_KEY),)


@lru_cache(maxsize=4)
def _multi_fernet(keys: tuple[str, ...]) -> MultiFernet:
    fernets = []
    for position, key in enumerate(keys, start=1):
        try:
            fernets.append(Fernet(key))
        except (ValueError, TypeError) as e:  # the key itself is never put in the message
            raise ImproperlyConfigured(
                f"COGNIZES_SECRET_KEYS: key {position} of {len(keys)} is not a Fernet key (32 url-safe base64 "
                'bytes; make one with `python -c "from cryptography.fernet import Fernet; '
                'print(Fernet.generate_key().decode())"`).'
            ) from e
    return MultiFernet(fernets)


def _fernet() -> MultiFernet:
    return _multi_fernet(configured_keys())


def encrypt(plaintext: str) -> str:
    """``plaintext`` encrypted with the newest key, as ASCII text."""
    return _fernet().encrypt(plaintext.encode()).decode("ascii")


def decrypt(token: str) -> str:
    """The text ``token`` holds; ``UnreadableSecret`` if no configured key opens it."""
    try:
        return _fernet().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, UnicodeError) as e:
        raise UnreadableSecret("No configured key (COGNIZES_SECRET_KEYS) decrypts this secret.") from e


def reencrypt(token: str) -> str:
    """``token`` encrypted again with the newest key (what it holds is unchanged); ``UnreadableSecret`` as
    ``decrypt``."""
    try:
        return _fernet().rotate(token.encode("ascii")).decode("ascii")
    except (InvalidToken, UnicodeError) as e:
        raise UnreadableSecret("No configured key (COGNIZES_SECRET_KEYS) decrypts this secret.") from e


def encrypted_with_newest(token: str) -> bool:
    """Whether the newest key opens ``token`` (a token left for ``reencrypt``, when not)."""
    try:
        Fernet(configured_keys()[0]).decrypt(token.encode("ascii"))
    except (InvalidToken, UnicodeError):
        return False
    return True
