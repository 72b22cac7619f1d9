#include "png_decode.h"

#include <zlib.h>

#include <cstdlib>
#include <stdexcept>

namespace posgeom::testing {
namespace {

uint32_t u32(const std::string& b, std::size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(b.at(at))) << 24) | (static_cast<uint32_t>(static_cast<uint8_t>(b.at(at + 1))) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(b.at(at + 2))) << 8) | static_cast<uint8_t>(b.at(at + 3));
}

std::string inflateAll(const std::string& packed) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw std::runtime_error("png: inflateInit");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(packed.size());
  std::string out;
  char buf[65536];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      throw std::runtime_error("png: corrupt IDAT");
    }
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  inflateEnd(&z);
  return out;
}

}  // namespace

DecodedPng decodePng(const std::string& bytes) {
  if (bytes.size() < 8 || bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) != 0) throw std::runtime_error("png: signature");
  DecodedPng img;
  std::string idat;
  for (std::size_t at = 8; at + 12 <= bytes.size();) {
    const uint32_t length = u32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4), data = bytes.substr(at + 8, length);
    const uint32_t crc = u32(bytes, at + 8 + length);
    const std::string body = bytes.substr(at + 4, 4 + length);
    if (crc != crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())))
      throw std::runtime_error("png: bad CRC in " + type);
    if (type == "IHDR") {
      img.width = static_cast<int>(u32(data, 0));
      img.height = static_cast<int>(u32(data, 4));
      if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0) throw std::runtime_error("png: unsupported format");
      img.channels = data[9] == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  const std::string raw = inflateAll(idat);
  const std::size_t stride = static_cast<std::size_t>(img.width) * img.channels;
  if (raw.size() != (stride + 1) * static_cast<std::size_t>(img.height)) throw std::runtime_error("png: wrong data size");
  img.pixels.assign(stride * img.height, 0);
  for (int y = 0; y < img.height; ++y) {
    const int filter = static_cast<uint8_t>(raw[y * (stride + 1)]);
    const auto* in = reinterpret_cast<const uint8_t*>(raw.data()) + y * (stride + 1) + 1;
    uint8_t* out = &img.pixels[y * stride];
    const uint8_t* up = y > 0 ? out - stride : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(img.channels) ? out[i - img.channels] : 0, b = up ? up[i] : 0,
                c = up && i >= static_cast<std::size_t>(img.channels) ? up[i - img.channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 0: break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw std::runtime_error("png: bad filter");
      }
      out[i] = static_cast<uint8_t>(in[i] + predictor);
    }
  }
  return img;
}

std::string base64Decode(const std::string& text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') break;
    else throw std::runtime_error("base64: bad character");
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace posgeom::testing
