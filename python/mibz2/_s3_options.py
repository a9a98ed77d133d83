"""S3 settings given in Python, in the names fsspec's s3 users write (s3fs's storage options), read
into the fields the engine takes (io::S3Options in s3_settings.h): whatever is given here is used
before the environment's AWS_* variables and the AWS settings files.

    key, secret, token    the access key id, the secret access key, a session token
    anon                  True: unsigned requests (a public bucket), whatever credentials there are
    endpoint_url          an S3-compatible store ("http://127.0.0.1:9000"), addressed path-style
    region                the region requests are signed for (also region_name)
    profile               a profile of ~/.aws/credentials and ~/.aws/config
    client_kwargs         as s3fs passes it to boto3: its endpoint_url and region_name (also
                          aws_access_key_id, aws_secret_access_key, aws_session_token)

Any other name is refused (ValueError naming it) rather than ignored: an option that seems to be
taken but is not would read with other settings than the user meant. Values are never part of a
message: they may be secrets.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple

_TEXT = ("key", "secret", "token", "endpoint_url", "region", "profile")
# boto3's names (client_kwargs, and region_name at the top as well) for the fields above.
_BOTO = {"aws_access_key_id": "key", "aws_secret_access_key": "secret", "aws_session_token": "token",
         "endpoint_url": "endpoint_url", "region_name": "region"}


def _put(fields: dict, name: str, value: Any, said: str) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"S3 option {said} must be a str, not {type(value).__name__}")
    if name in fields and fields[name] != value:
        raise ValueError(f"S3 option {said} differs from another way of giving {name}")
    fields[name] = value


def s3_fields(options: Optional[Mapping[str, Any]]) -> Optional[Tuple[Tuple[str, Any], ...]]:
    """The engine's fields for `options` (fsspec-style, see the module), as sorted (name, value)
    pairs (hashable: engines are shared by settings), or None for no options."""
    if not options:
        return None
    if not isinstance(options, Mapping):
        raise TypeError(f"S3 options must be a dict, not {type(options).__name__}")
    fields: dict = {}
    unknown = []
    for name, value in options.items():
        if name in _TEXT:
            _put(fields, name, value, name)
        elif name == "region_name":
            _put(fields, "region", value, name)
        elif name == "anon":
            if not isinstance(value, bool):
                raise TypeError(f"S3 option anon must be a bool, not {type(value).__name__}")
            if value:
                fields["anon"] = True
        elif name == "client_kwargs":
            if not isinstance(value, Mapping):
                raise TypeError(f"S3 option client_kwargs must be a dict, not {type(value).__name__}")
            for inner, v in value.items():
                if inner in _BOTO:
                    _put(fields, _BOTO[inner], v, f"client_kwargs[{inner!r}]")
                else:
                    unknown.append(f"client_kwargs[{inner!r}]")
        else:
            unknown.append(repr(name))
    if unknown:
        raise ValueError(f"S3 options not taken by mibz2 (it reads S3 itself, not through s3fs): "
                         f"{', '.join(sorted(unknown))}; it takes key, secret, token, anon, endpoint_url, "
                         "region, profile, and client_kwargs' endpoint_url and region_name")
    return tuple(sorted(fields.items())) or None
