#include "io/s3_listing.h"

#include <set>

#include "io/source_url.h"
#include "io/xml_text.h"

namespace mibz2::io {
namespace {

// A page of 1000 keys is about 300 KB of XML; more than this is no listing.
constexpr size_t kMaxPageBytes = 16 << 20;

// A key of a reply asked for with encoding-type=url: percent-encoded, and a '+' for a space (as
// S3 encodes them; moto and others encode a '+' as %2B, which decodes the same).
std::string url_decoded_key(std::string_view text) {
  std::string plus_free(xml_unescape(text));
  for (char& c : plus_free)
    if (c == '+') c = ' ';
  return percent_decode(plus_free);
}

}  // namespace

bool parse_list_page(std::string_view xml, S3Listing& into, std::string* next_token) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) return false;
  size_t pos = 0;
  std::string_view item;
  while (xml_element(xml, "Contents", &pos, &item)) {
    ListedObject o;
    size_t at = 0;
    std::string_view text;
    if (!xml_element(item, "Key", &at, &text)) return false;
    o.key = url_decoded_key(text);
    o.size = std::strtoull(xml_first(item, "Size").c_str(), nullptr, 10);
    o.etag = xml_first(item, "ETag");
    o.last_modified = xml_first(item, "LastModified");
    into.objects.push_back(std::move(o));
  }
  pos = 0;
  while (xml_element(xml, "CommonPrefixes", &pos, &item)) into.prefixes.push_back(url_decoded_key(xml_first(item, "Prefix")));
  const bool truncated = xml_first(xml, "IsTruncated") == "true";
  *next_token = truncated ? xml_first(xml, "NextContinuationToken") : std::string();
  return !truncated || !next_token->empty();
}

base::Result<S3Listing> list_s3_objects(HttpClient& client, const S3Settings& s3, std::string_view bucket,
                                        std::string_view prefix, std::string_view delimiter, size_t page_keys) {
  S3Listing listing;
  const std::string shown = "s3://" + std::string(bucket) + "/" + std::string(prefix);
  std::string token;
  std::set<std::string> tokens_seen;  // a server that gives a token twice would list forever
  do {
    const std::string url = s3_list_url(s3, bucket, prefix, token, delimiter, page_keys);
    const RemoteObject request = s3_request(s3, url, shown);
    base::Result<std::string> page = client.get_small(request, url, kMaxPageBytes);
    MIBZ2_FORWARD_IF_ERROR(page);
    ++listing.pages;
    MIBZ2_RETURN_ERROR_IF(!parse_list_page(*page, listing, &token), EIO,
                          shown + ": the reply to ListObjectsV2 is not a listing, or gives no next page's token");
    MIBZ2_RETURN_ERROR_IF(!token.empty() && !tokens_seen.insert(token).second, EIO,
                          shown + ": ListObjectsV2 gave the same continuation token twice");
  } while (!token.empty());
  return listing;
}

}  // namespace mibz2::io
