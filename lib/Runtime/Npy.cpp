//===- Npy.cpp - Read and write NumPy .npy arrays -------------------------===//
//
// The .npy format: magic "\x93NUMPY", version, header length, a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (n, m), } padded
// to 64 bytes, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Npy.h"

#include "nabla/Runtime/Files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace nabla::runtime;

int64_t NpyArray::numElements() const {
  // readNpy bounds the product, so it cannot overflow here.
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

std::string nabla::runtime::dtypeForElementType(const std::string &element) {
  if (element == "f16")
    return "f2";
  // numpy has no bfloat16: a bf16 buffer holds its bits.
  if (element == "bf16")
    return "u2";
  if (element == "f32")
    return "f4";
  if (element == "f64")
    return "f8";
  if (element == "i8")
    return "i1";
  if (element == "i16")
    return "i2";
  if (element == "i32")
    return "i4";
  if (element == "i64" || element == "index")
    return "i8";
  return "";
}

bool nabla::runtime::dtypeMatchesElementType(const std::string &dtype,
                                             const std::string &element) {
  std::string want = dtypeForElementType(element);
  if (want.empty())
    return false;
  if (dtype == want)
    return true;
  // A half (f16, bf16) buffer also takes its bits as int16/uint16.
  if (element == "f16" || element == "bf16")
    return dtype == "i2" || dtype == "u2";
  if (want[0] != 'i')
    return false;
  return dtype == "u" + want.substr(1) || (want == "i1" && dtype == "b1");
}

/// Extracts the quoted value after `key` in the header dict.
static bool findField(const std::string &header, const std::string &key,
                      std::string &value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return false;
  size_t colon = header.find(':', at);
  if (colon == std::string::npos)
    return false;
  size_t start = header.find_first_not_of(" ", colon + 1);
  if (start == std::string::npos)
    return false;
  if (header[start] == '\'') {
    size_t end = header.find('\'', start + 1);
    if (end == std::string::npos)
      return false;
    value = header.substr(start + 1, end - start - 1);
    return true;
  }
  if (header[start] == '(') {
    size_t end = header.find(')', start);
    if (end == std::string::npos)
      return false;
    value = header.substr(start + 1, end - start - 1);
    return true;
  }
  size_t end = header.find_first_of(",}", start);
  value = header.substr(start, end - start);
  return true;
}

bool nabla::runtime::readNpy(const std::string &path, NpyArray &array,
                             std::string &error) {
  std::string bytes;
  if (!readFile(path, bytes, error))
    return false;
  return parseNpy(bytes, path, array, error);
}

bool nabla::runtime::parseNpy(const std::string &bytes, const std::string &path,
                              NpyArray &array, std::string &error) {
  auto bad = [&](const std::string &why) {
    error = "'" + path + "' is not a supported .npy file: " + why;
    return false;
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return bad("missing magic");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength =
        static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= size_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return bad("unknown version " + std::to_string(major));
  }
  if (headerStart + headerLength > bytes.size())
    return bad("truncated header");
  std::string header = bytes.substr(headerStart, headerLength);

  std::string descr, fortran, shape;
  if (!findField(header, "descr", descr) ||
      !findField(header, "fortran_order", fortran) ||
      !findField(header, "shape", shape))
    return bad("malformed header");
  if (fortran.find("True") != std::string::npos)
    return bad("Fortran order is not supported (use C order)");
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|'))
    return bad("dtype '" + descr + "' is not little-endian");
  array.dtype = descr.substr(1);
  static const char *const kSupported[] = {"f2", "f4", "f8", "b1", "i1", "u1",
                                           "i2", "u2", "i4", "u4", "i8", "u8"};
  if (std::find(std::begin(kSupported), std::end(kSupported), array.dtype) ==
          std::end(kSupported) ||
      (descr[0] == '|') != (array.elementSize() == 1))
    return bad("dtype '" + descr +
               "' (supported: float16, float32, float64, bool, int8, int16, "
               "int32, int64, uint8, uint16, uint32, uint64)");

  // Extents are checked one by one so that the byte size cannot overflow
  // (the data must then be in the file, which readFile bounds).
  array.shape.clear();
  uint64_t elements = 1;
  std::stringstream dims(shape);
  std::string item;
  while (std::getline(dims, item, ',')) {
    size_t first = item.find_first_not_of(" ");
    if (first == std::string::npos)
      continue;
    char *end = nullptr;
    errno = 0;
    long long extent = std::strtoll(item.c_str() + first, &end, 10);
    if (end == item.c_str() + first || extent < 0 || errno ||
        item.find_first_not_of(" ", end - item.c_str()) != std::string::npos)
      return bad("bad shape '" + shape + "'");
    if (extent && elements > kMaxInputFileBytes / uint64_t(extent))
      return bad("shape '" + shape + "' is too large");
    elements *= uint64_t(extent);
    array.shape.push_back(extent);
  }
  if (elements > kMaxInputFileBytes / array.elementSize())
    return bad("shape '" + shape + "' is too large");
  size_t dataBytes = size_t(elements) * array.elementSize();
  size_t dataStart = headerStart + headerLength;
  if (bytes.size() - dataStart != dataBytes)
    return bad("expected " + std::to_string(dataBytes) + " data bytes, found " +
               std::to_string(bytes.size() - dataStart));
  array.data.assign(bytes.begin() + dataStart, bytes.end());
  return true;
}

bool nabla::runtime::writeNpy(const std::string &path, const NpyArray &array,
                              std::string &error) {
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i)
    shape +=
        std::to_string(array.shape[i]) + (array.shape.size() == 1      ? ","
                                          : i + 1 < array.shape.size() ? ", "
                                                                       : "");
  shape += ")";
  std::string order = array.elementSize() == 1 ? "|" : "<";
  std::string header = "{'descr': '" + order + array.dtype +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  char preamble[10] = {'\x93',
                       'N',
                       'U',
                       'M',
                       'P',
                       'Y',
                       1,
                       0,
                       static_cast<char>(header.size() & 0xFF),
                       static_cast<char>(header.size() >> 8)};
  out.write(preamble, sizeof(preamble));
  out << header;
  out.write(reinterpret_cast<const char *>(array.data.data()),
            array.data.size());
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}
