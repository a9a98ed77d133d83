// One profile of the AWS shared files, as the AWS command line and boto3 read them:
// ~/.aws/credentials (sections named [NAME]) and ~/.aws/config (sections named [profile NAME],
// and [default]), or the files AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name.
//
// The files are INI text: "key = value" lines under "[section]" headers, comments starting with
// '#' or ';'. An indented line under a key with no value belongs to a nested block (the config
// file's "s3 =" block of S3 settings) and is not read here: what this program uses is flat.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mibz2::io {

// The keys of one section, lower-cased, with their values (spaces around them taken off).
using IniSection = std::map<std::string, std::string>;

// The sections of an INI text, by name as written between the brackets (spaces trimmed).
std::map<std::string, IniSection> parse_ini(std::string_view text);

// Profile NAME's keys from both files, the credentials file's winning where both have one.
struct AwsProfile {
  bool found = false;  // the profile is in one of the files at least
  IniSection values;   // aws_access_key_id, aws_secret_access_key, aws_session_token, region, ...
};

// Reads profile `name` from the files at these paths (an empty path, or a file that does not
// exist, is no file). A file that exists and cannot be read is an error naming it.
base::Result<AwsProfile> read_aws_profile(const std::string& name, const std::string& credentials_path,
                                          const std::string& config_path);

}  // namespace mibz2::io
