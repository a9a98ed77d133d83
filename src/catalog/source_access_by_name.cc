#include "catalog/source_access_by_name.h"

#include "catalog/catalog_file.h"
#include "io/source_url.h"

namespace mibz2::catalog {

const SourceAccess& SourceAccessByName::of(const CatalogFile& file) const {
  return io::is_url(file.path()) ? remote_ : local_;
}

}  // namespace mibz2::catalog
