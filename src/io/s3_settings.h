// S3 as AWS users configure it: where the credentials, the region and the endpoint come from, and
// the URL of an object or of a listing under those settings.
//
// Each setting is taken from the first place that has it, as the AWS command line and boto3 do:
//
//   credentials  S3Options (key, secret, token) > AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
//                AWS_SESSION_TOKEN > the profile's aws_access_key_id, aws_secret_access_key,
//                aws_session_token in the credentials file, then in the config file > none:
//                anonymous (unsigned requests, for public buckets; S3Options::anon forces it)
//   profile      S3Options::profile > AWS_PROFILE > AWS_DEFAULT_PROFILE > "default" (a profile
//                named explicitly must exist; "default" need not)
//   files        AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials), AWS_CONFIG_FILE (~/.aws/config)
//   region       S3Options::region > AWS_REGION > AWS_DEFAULT_REGION > the profile's region >
//                us-east-1
//   endpoint     S3Options::endpoint_url > AWS_ENDPOINT_URL_S3 > AWS_ENDPOINT_URL > the profile's
//                endpoint_url > AWS itself. A custom endpoint (an S3-compatible store) is
//                addressed path-style (ENDPOINT/BUCKET/KEY); AWS virtual-host style
//                (https://BUCKET.s3.REGION.amazonaws.com/KEY), or path-style for a bucket name
//                that cannot be a host name (dots, capitals, underscores).
//   CA bundle    AWS_CA_BUNDLE > the profile's ca_bundle > (the HTTP client's own: CURL_CA_BUNDLE
//                or the system's)
//
// fsspec's storage options map onto S3Options: key, secret, token, anon, endpoint_url (also
// client_kwargs' endpoint_url and region_name), profile.
//
// Not read (yet): SSO, credential_process, assumed roles (role_arn), and the instance metadata
// service of EC2 machines.
//
// The secret never leaves S3Credentials: no message here or in the HTTP client names it, nor the
// access key id.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mibz2::io {

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials' token, or empty
  bool empty() const { return access_key_id.empty(); }
};

// What a caller sets explicitly; every field left unset comes from the environment and the files.
struct S3Options {
  std::optional<std::string> key;     // access key id
  std::optional<std::string> secret;  // secret access key
  std::optional<std::string> token;   // session token
  std::optional<std::string> region;
  std::optional<std::string> endpoint_url;  // "http://127.0.0.1:9000", "https://s3.example.org"
  std::optional<std::string> profile;
  bool anon = false;  // unsigned requests whatever credentials there are
  bool operator==(const S3Options&) const = default;
};

struct S3Settings {
  std::string region = "us-east-1";
  std::string endpoint_url;  // a custom endpoint without its trailing '/', or empty: AWS
  bool anonymous = false;    // requests are not signed
  S3Credentials credentials;
  std::string ca_bundle;     // a CA file for TLS, or empty: the HTTP client's default
  // Where the credentials came from, for messages: "the options", "the environment", "profile
  // 'dev' in /home/u/.aws/credentials", or "none (anonymous)".
  std::string credentials_from;
};

// A variable of the environment, or nothing. process_environment() reads the process's; tests
// pass their own.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvironmentLookup process_environment();

// The settings for `options` in this environment. Fails (with a message naming the variable, file
// or profile, never a secret) for: a key without its secret or the reverse, a profile named
// explicitly that is in neither file, a settings file that cannot be read, an endpoint that is not
// an http(s) URL.
base::Result<S3Settings> resolve_s3_settings(const S3Options& options,
                                             const EnvironmentLookup& env = process_environment());

// The URL of object KEY in BUCKET (the key percent-encoded, its '/' kept).
std::string s3_object_url(const S3Settings& s3, std::string_view bucket, std::string_view key);

// The URL of one page of ListObjectsV2 of the keys under PREFIX (keys in the answer URL-encoded:
// encoding-type=url, so that any key survives the XML). `continuation_token` is the previous
// page's NextContinuationToken (empty for the first page); `delimiter` (e.g. "/") groups keys
// into CommonPrefixes; `max_keys` 0 leaves the page size to the server (1000 for S3). The query's
// parameters are in the order SigV4 signs them.
std::string s3_list_url(const S3Settings& s3, std::string_view bucket, std::string_view prefix,
                        std::string_view continuation_token = {}, std::string_view delimiter = {},
                        size_t max_keys = 0);

}  // namespace mibz2::io
