// The keys under an S3 prefix, by ListObjectsV2, page after page (a page holds at most 1000
// keys; the next is asked for with the continuation token the last one gave): what a mount of
// s3://BUCKET/PREFIX/ shows as a tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "io/http_client.h"
#include "io/s3_settings.h"

namespace mibz2::io {

struct ListedObject {
  std::string key;  // the whole key (the prefix included), decoded
  uint64_t size = 0;
  std::string etag;
  std::string last_modified;  // as S3 writes it: "2026-12-03T14:35:41.000Z"
};

struct S3Listing {
  std::vector<ListedObject> objects;  // in S3's order (by key)
  std::vector<std::string> prefixes;  // with a delimiter: the CommonPrefixes, decoded
  size_t pages = 0;                   // requests it took
};

// Every key under `prefix` in `bucket` (all pages). With a `delimiter` ("/"), keys past the
// next delimiter after the prefix are grouped into `prefixes` (one level of a tree); without, all
// keys at every depth. `page_keys` 0 leaves the page size to the server. Fails as the client's
// requests fail (403: EACCES, a bucket that does not exist: ENOENT), or with EIO for a reply that
// is not a listing.
base::Result<S3Listing> list_s3_objects(HttpClient& client, const S3Settings& s3, std::string_view bucket,
                                        std::string_view prefix, std::string_view delimiter = {},
                                        size_t page_keys = 0);

// One page's reply taken apart (for list_s3_objects and its tests): its objects and prefixes are
// appended to `into`; *next_token is the token of the next page, empty when this is the last.
// False when the text is not a ListObjectsV2 reply, or says it is truncated and gives no token.
bool parse_list_page(std::string_view xml, S3Listing& into, std::string* next_token);

}  // namespace mibz2::io
