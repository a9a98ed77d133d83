#include "io/s3_settings.h"

#include <cctype>
#include <cstdlib>

#include "io/aws_profile.h"
#include "io/source_url.h"

namespace mibz2::io {
namespace {

// The variable's value when it is set and not empty (an empty AWS_REGION means none, as for the
// AWS command line).
std::optional<std::string> nonempty(const EnvironmentLookup& env, const std::string& name) {
  std::optional<std::string> v = env(name);
  if (v && v->empty()) v.reset();
  return v;
}

// Whether the bucket can be the first label of AWS's host name (virtual-host style): lower-case
// letters, digits and '-', 3 to 63 of them, starting and ending with a letter or digit. A name
// with a dot could be a host name, but not under AWS's TLS certificate (*.s3.REGION...).
bool host_style_bucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (unsigned char c : bucket)
    if (!(std::islower(c) || std::isdigit(c) || c == '-')) return false;
  return bucket.front() != '-' && bucket.back() != '-';
}

std::string aws_domain(const std::string& region) {
  return region.rfind("cn-", 0) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
}

// The credentials as the table in s3_settings.h orders them.
base::Status take_credentials(const S3Options& options, const EnvironmentLookup& env, const AwsProfile& profile,
                              const std::string& profile_where, S3Settings& s) {
  if (options.anon) {
    s.anonymous = true;
    s.credentials_from = "none (anonymous)";
    return {};
  }
  if (options.key || options.secret) {
    MIBZ2_RETURN_ERROR_IF(!options.key || !options.secret || options.key->empty() || options.secret->empty(), EINVAL,
                          "S3: a key without its secret, or a secret without its key, in the options");
    s.credentials = {*options.key, *options.secret, options.token.value_or("")};
    s.credentials_from = "the options";
    return {};
  }
  const std::optional<std::string> key = nonempty(env, "AWS_ACCESS_KEY_ID");
  const std::optional<std::string> secret = nonempty(env, "AWS_SECRET_ACCESS_KEY");
  if (key || secret) {
    MIBZ2_RETURN_ERROR_IF(!key, EINVAL, "S3: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
    MIBZ2_RETURN_ERROR_IF(!secret, EINVAL, "S3: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    s.credentials = {*key, *secret, nonempty(env, "AWS_SESSION_TOKEN").value_or("")};
    s.credentials_from = "the environment";
    return {};
  }
  const auto value = [&](const char* name) {
    const auto it = profile.values.find(name);
    return it == profile.values.end() ? std::string() : it->second;
  };
  const std::string pkey = value("aws_access_key_id");
  const std::string psecret = value("aws_secret_access_key");
  if (!pkey.empty() || !psecret.empty()) {
    MIBZ2_RETURN_ERROR_IF(pkey.empty() || psecret.empty(), EINVAL,
                          "S3: " + profile_where + " has aws_access_key_id or aws_secret_access_key without the other");
    s.credentials = {pkey, psecret, value("aws_session_token")};
    s.credentials_from = profile_where;
    return {};
  }
  s.anonymous = true;
  s.credentials_from = "none (anonymous)";
  return {};
}

}  // namespace

EnvironmentLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

base::Result<S3Settings> resolve_s3_settings(const S3Options& options, const EnvironmentLookup& env) {
  S3Settings s;
  const std::optional<std::string> home = nonempty(env, "HOME");
  const std::string credentials_path = nonempty(env, "AWS_SHARED_CREDENTIALS_FILE")
                                           .value_or(home ? *home + "/.aws/credentials" : std::string());
  const std::string config_path =
      nonempty(env, "AWS_CONFIG_FILE").value_or(home ? *home + "/.aws/config" : std::string());
  std::optional<std::string> named = options.profile;
  if (!named) named = nonempty(env, "AWS_PROFILE");
  if (!named) named = nonempty(env, "AWS_DEFAULT_PROFILE");
  const std::string profile_name = named.value_or("default");
  base::Result<AwsProfile> profile = read_aws_profile(profile_name, credentials_path, config_path);
  MIBZ2_FORWARD_IF_ERROR(profile);
  MIBZ2_RETURN_ERROR_IF(named && !profile->found, ENOENT,
                        "S3: the AWS profile '" + profile_name + "' is in neither " +
                            (credentials_path.empty() ? "(no credentials file)" : credentials_path) + " nor " +
                            (config_path.empty() ? "(no config file)" : config_path));
  const auto from_profile = [&](const char* name) -> std::optional<std::string> {
    const auto it = profile->values.find(name);
    if (it == profile->values.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
  const std::string profile_where = "profile '" + profile_name + "' of the AWS settings files";
  MIBZ2_FORWARD_IF_ERROR(take_credentials(options, env, *profile, profile_where, s));

  std::optional<std::string> region = options.region;
  if (!region) region = nonempty(env, "AWS_REGION");
  if (!region) region = nonempty(env, "AWS_DEFAULT_REGION");
  if (!region) region = from_profile("region");
  if (region && !region->empty()) s.region = *region;

  std::optional<std::string> endpoint = options.endpoint_url;
  if (!endpoint) endpoint = nonempty(env, "AWS_ENDPOINT_URL_S3");
  if (!endpoint) endpoint = nonempty(env, "AWS_ENDPOINT_URL");
  if (!endpoint) endpoint = from_profile("endpoint_url");
  if (endpoint && !endpoint->empty()) {
    base::Result<SourceUrl> url = parse_source_url(*endpoint);
    MIBZ2_RETURN_ERROR_IF(!url.ok() || url->is_s3(), EINVAL,
                          "S3: the endpoint " + redacted_url(*endpoint) + " is not an http:// or https:// URL");
    s.endpoint_url = url->url;
    while (!s.endpoint_url.empty() && s.endpoint_url.back() == '/') s.endpoint_url.pop_back();
  }

  std::optional<std::string> ca = nonempty(env, "AWS_CA_BUNDLE");
  if (!ca) ca = from_profile("ca_bundle");
  s.ca_bundle = ca.value_or("");
  return s;
}

std::string s3_object_url(const S3Settings& s3, std::string_view bucket, std::string_view key) {
  const std::string path = percent_encode(key, /*keep_slash=*/true);
  if (!s3.endpoint_url.empty()) return s3.endpoint_url + "/" + percent_encode(bucket, false) + "/" + path;
  const std::string host = "s3." + s3.region + "." + aws_domain(s3.region);
  if (host_style_bucket(bucket)) return "https://" + std::string(bucket) + "." + host + "/" + path;
  return "https://" + host + "/" + percent_encode(bucket, false) + "/" + path;
}

std::string s3_list_url(const S3Settings& s3, std::string_view bucket, std::string_view prefix,
                        std::string_view continuation_token, std::string_view delimiter, size_t max_keys) {
  // The bucket's URL is an object URL with an empty key ("https://host/bucket/"), without the
  // last '/'; a virtual-host bucket's is the host's root, whose '/' stays.
  std::string url = s3_object_url(s3, bucket, "");
  if (url.back() == '/' && url.find('/', url.find("://") + 3) != url.size() - 1) url.pop_back();
  // Sorted by name: curl signs the query as it is written.
  url += "?";
  if (!continuation_token.empty()) url += "continuation-token=" + percent_encode(continuation_token, false) + "&";
  if (!delimiter.empty()) url += "delimiter=" + percent_encode(delimiter, false) + "&";
  url += "encoding-type=url&list-type=2";
  if (max_keys) url += "&max-keys=" + std::to_string(max_keys);
  url += "&prefix=" + percent_encode(prefix, false);
  return url;
}

}  // namespace mibz2::io
