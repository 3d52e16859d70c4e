"""The seal of a run's JSON documents (checkpoints): the document's own SHA-256, or an HMAC-SHA256 under the key in
``PSRO_CHECKPOINT_KEY``, as its last entry, so that a reader checks every byte of the file
(:mod:`psro.run.checkpoint` seals with it)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re

import numpy as np

__all__ = ["seal_document", "seal_problem", "is_sealed", "KEY_VARIABLE", "sha256", "check_key"]


def sha256(data: bytes) -> str:
    """The SHA-256 of ``data`` as hex.

    Examples
    --------
    >>> sha256(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


_SEAL = re.compile(rb'(\{.*),"(sha256|hmac_sha256)":"([0-9a-f]{64})"\}', re.DOTALL)

#: The environment variable whose value, when set, seals checkpoints with HMAC-SHA256 instead of a plain SHA-256
KEY_VARIABLE = "PSRO_CHECKPOINT_KEY"


def _seal_key() -> bytes | None:
    """The key of ``PSRO_CHECKPOINT_KEY`` (None when unset); set but empty is refused, never read as no key.

    Examples
    --------
    >>> os.environ[KEY_VARIABLE] = ""
    >>> _seal_key()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: PSRO_CHECKPOINT_KEY is set but empty; ...
    >>> del os.environ[KEY_VARIABLE]
    """
    key = os.environ.get(KEY_VARIABLE)
    if key is None:
        return None
    if not key.strip():
        raise ValueError(f"{KEY_VARIABLE} is set but empty; an empty key would silently seal (and accept) "
                         f"checkpoints without one: set it to your secret key, or unset it (unset {KEY_VARIABLE}) "
                         "to write checkpoints without a key.")
    return key.encode()


def check_key() -> None:
    """Refuse an empty ``PSRO_CHECKPOINT_KEY`` now (a command calls it before it starts a run), not at the first
    checkpoint."""
    _seal_key()


def seal_document(document: dict) -> bytes:
    """The document's JSON (sorted keys, no spaces) with a last entry ``"sha256"``: the digest of the bytes
    before it, closed with ``}`` (so a reader checks the file's own bytes, every one of them).

    With a key in the environment variable ``PSRO_CHECKPOINT_KEY``, the last entry is ``"hmac_sha256"`` instead,
    the HMAC-SHA256 of the same bytes under that key: then only a holder of the key can write a document that
    reads back (:func:`seal_problem`). A plain SHA-256 detects damage, not forgery.

    Examples
    --------
    >>> seal_document({"a": 1})[-20:]
    b'cebeae62276a97f862"}'
    """
    body = json.dumps(document, sort_keys=True, separators=(",", ":"), default=_json_default).encode()
    key = _seal_key()
    if key is None:
        return body[:-1] + b',"sha256":"' + sha256(body).encode() + b'"}'
    return body[:-1] + b',"hmac_sha256":"' + hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b'"}'


def seal_problem(text: bytes) -> str | None:
    """What is wrong with the seal of a document :func:`seal_document` wrote (None: nothing): no seal, a digest
    that does not match, or a key that does not match (``PSRO_CHECKPOINT_KEY`` set and the document unkeyed or
    sealed with another key, or not set and the document keyed).

    Examples
    --------
    >>> seal_problem(seal_document({"a": 1})) is None
    True
    >>> seal_problem(seal_document({"a": 1}).replace(b'"a":1', b'"a":2'))
    'its SHA-256 does not match its content (a changed byte, a hand edit)'
    """
    match = _SEAL.fullmatch(text)
    if match is None:
        return ('its SHA-256 seal (the final "sha256" entry) is missing or does not match its content: a '
                'truncated or hand-edited file')
    body, kind, digest = match.group(1) + b"}", match.group(2), match.group(3).decode()
    key = _seal_key()
    if kind == b"sha256":
        if sha256(body) != digest:
            return "its SHA-256 does not match its content (a changed byte, a hand edit)"
        if key is not None:
            return (f"it is sealed without a key, but {KEY_VARIABLE} is set, so only checkpoints sealed with that "
                    f"key are accepted (unset {KEY_VARIABLE} to resume a run written without one)")
        return None
    if key is None:
        return f"it is sealed with a key (HMAC-SHA256): set {KEY_VARIABLE} to the key it was written with"
    if not hmac.compare_digest(hmac.new(key, body, hashlib.sha256).hexdigest(), digest):
        return (f"its HMAC-SHA256 does not match the key in {KEY_VARIABLE}: it was sealed with another key, or "
                "changed since (a forged checkpoint)")
    return None


def is_sealed(text: bytes) -> bool:
    """Whether ``text`` ends with the seal :func:`seal_document` writes, matching the bytes before it (and the key
    of ``PSRO_CHECKPOINT_KEY``, when set): :func:`seal_problem` is None."""
    return seal_problem(text) is None


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in a checkpoint")
