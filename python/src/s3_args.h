// The S3 settings a Python caller gives (mibz2.open(..., s3={...})), as the engine takes them
// (io::S3Options). mibz2/_s3_options.py has already read fsspec's names (client_kwargs, ...) into
// these fields; this checks what crosses into C++ as py_args.h checks numbers.
#pragma once

#include <pybind11/pybind11.h>

#include "io/s3_settings.h"

namespace mibz2::python {

// `fields`: a dict of the S3Options fields (key, secret, token, region, endpoint_url, profile: a
// str or None; anon: a bool), or None for none. TypeError for a value of another type and
// ValueError for another name, each naming the field, never its value (it may be a secret).
io::S3Options s3_options_arg(pybind11::handle fields);

}  // namespace mibz2::python
