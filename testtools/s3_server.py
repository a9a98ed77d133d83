"""An S3-compatible server on loopback for tests: moto's (the Python package moto, with boto3 beside
it: run this with the interpreter that has them, the one of the `moto_server` command), in this
process, on a free port, with an IAM user whose key signs requests.

    python3 s3_server.py [--port 0]

When it is ready it prints one line of JSON:

    {"port": N, "url": "http://127.0.0.1:N", "key": ACCESS_KEY_ID, "secret": SECRET_ACCESS_KEY,
     "region": "us-east-1", "session_key": ..., "session_secret": ..., "session_token": ...}

(the session_* fields: temporary credentials of a role allowed the same, from STS AssumeRole)

then reads commands from its standard input, one JSON object a line, and answers each with one
line of JSON ({"ok": true} or {"ok": false, "error": "..."}); it stops at the end of its input (or
at SIGTERM).

    {"op": "bucket", "name": B}                          make bucket B
    {"op": "put", "bucket": B, "key": K, "file": PATH}   upload a file as key K (or "data": TEXT)
                  [, "public": true]                     readable without credentials
    {"op": "delete", "bucket": B, "key": K}
    {"op": "signatures", "on": true|false}               whether requests must be signed by the
                                                         user's key (moto's IAM check); off at start

With signatures on, moto checks each request's SigV4 signature and the user's policy (s3:* on
everything); an unsigned request then fails (moto answers 500), so a test of anonymous access
turns them off. (moto checks a signature over the URL as its web framework rewrites it, so a
signed query holding '/' as %2F fails there though S3 itself accepts it: tests that sign keep
such characters out of their queries.)
"""

import argparse
import json
import logging
import signal
import sys

import boto3
from moto import settings
from moto.core.authorization import ActionAuthenticatorMixin
from moto.server import ThreadedMotoServer

REGION = "us-east-1"
POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}


def set_signatures(on):
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0 if on else float("inf")
    ActionAuthenticatorMixin.request_count = 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request on standard error

    set_signatures(False)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=args.port, verbose=False)
    server.start()
    port = server.get_host_and_port()[1]
    url = f"http://127.0.0.1:{port}"
    # The setup's own requests go unsigned-checked (signatures are off until a command turns them on).
    s3 = boto3.client("s3", endpoint_url=url, region_name=REGION, aws_access_key_id="setup",
                      aws_secret_access_key="setup")
    iam = boto3.client("iam", endpoint_url=url, region_name=REGION, aws_access_key_id="setup",
                       aws_secret_access_key="setup")
    iam.create_user(UserName="mibz2-test")
    iam.put_user_policy(UserName="mibz2-test", PolicyName="s3", PolicyDocument=json.dumps(POLICY))
    key = iam.create_access_key(UserName="mibz2-test")["AccessKey"]
    # Temporary credentials too (a key, a secret and a session token), of a role allowed the same.
    trust = {"Version": "2012-10-17",
             "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(RoleName="mibz2-test-role", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    iam.put_role_policy(RoleName="mibz2-test-role", PolicyName="s3", PolicyDocument=json.dumps(POLICY))
    sts = boto3.client("sts", endpoint_url=url, region_name=REGION, aws_access_key_id="setup",
                       aws_secret_access_key="setup")
    session = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="mibz2-test")["Credentials"]
    print(json.dumps({"port": port, "url": url, "key": key["AccessKeyId"], "secret": key["SecretAccessKey"],
                      "region": REGION, "session_key": session["AccessKeyId"],
                      "session_secret": session["SecretAccessKey"], "session_token": session["SessionToken"]}),
          flush=True)

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
            op = cmd["op"]
            # Setup requests are made with signatures off, whatever the tests have set.
            on = settings.INITIAL_NO_AUTH_ACTION_COUNT == 0
            set_signatures(False)
            try:
                if op == "bucket":
                    s3.create_bucket(Bucket=cmd["name"])
                elif op == "put":
                    body = open(cmd["file"], "rb").read() if "file" in cmd else cmd["data"].encode()
                    extra = {"ACL": "public-read"} if cmd.get("public") else {}
                    s3.put_object(Bucket=cmd["bucket"], Key=cmd["key"], Body=body, **extra)
                elif op == "delete":
                    s3.delete_object(Bucket=cmd["bucket"], Key=cmd["key"])
                elif op == "signatures":
                    on = bool(cmd["on"])
                else:
                    raise ValueError(f"unknown op {op!r}")
            finally:
                set_signatures(on)
            print(json.dumps({"ok": True}), flush=True)
        except Exception as e:  # the answer says what went wrong; the server goes on
            print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}), flush=True)
    server.stop()


if __name__ == "__main__":
    main()
