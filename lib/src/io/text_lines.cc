#include "io/text_lines.h"

#include <algorithm>
#include <cstring>

#include "base/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HPFREEZE_LINE_SCAN_AVX2 1
#endif

namespace hpfreeze {

namespace {

constexpr std::uint64_t kHighBits = 0x8080808080808080u;

std::uint64_t load_word(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// The index of the first byte at or after i that is not ASCII, or n.
std::size_t skip_ascii(const unsigned char* p, std::size_t i, std::size_t n) {
  while (n - i >= 32 && ((load_word(p + i) | load_word(p + i + 8) | load_word(p + i + 16) |
                          load_word(p + i + 24)) &
                         kHighBits) == 0) {
    i += 32;
  }
  while (n - i >= 8 && (load_word(p + i) & kHighBits) == 0) i += 8;
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

// A line ends at a CR, and at an LF whose byte before is no CR.
std::uint64_t scan_scalar(const unsigned char* p, std::size_t begin, std::size_t end, bool* ascii) {
  std::uint64_t count = 0;
  unsigned char any = 0;
  for (std::size_t i = begin; i < end; ++i) {
    any |= p[i];
    count += p[i] == '\r' || (p[i] == '\n' && p[i - 1] != '\r');
  }
  *ascii = any < 0x80;
  return count;
}

// The vector scans compare each block of bytes with CR and LF, and the block one byte
// earlier with CR; a match is 0xFF, -1 as a byte, so subtracting it counts one in that
// byte's lane, which holds at most 255 before the lanes are summed.
#if defined(__SSE2__)
std::uint64_t scan_sse2(const unsigned char* p, std::size_t begin, std::size_t end, bool* ascii) {
  const __m128i cr = _mm_set1_epi8('\r');
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  __m128i high = zero;
  std::uint64_t count = 0;
  std::size_t i = begin;
  while (end - i >= 16) {
    const std::size_t rounds = std::min<std::size_t>(255, (end - i) / 16);
    __m128i lanes = zero;
    for (std::size_t round = 0; round < rounds; ++round, i += 16) {
      const __m128i here = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i - 1));
      const __m128i lf_alone =
          _mm_andnot_si128(_mm_cmpeq_epi8(before, cr), _mm_cmpeq_epi8(here, lf));
      lanes = _mm_sub_epi8(lanes, _mm_or_si128(_mm_cmpeq_epi8(here, cr), lf_alone));
      high = _mm_or_si128(high, here);
    }
    const __m128i sums = _mm_sad_epu8(lanes, zero);
    count += static_cast<std::uint64_t>(_mm_cvtsi128_si64(sums)) +
             static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
  bool tail_ascii = true;
  count += scan_scalar(p, i, end, &tail_ascii);
  *ascii = tail_ascii && _mm_movemask_epi8(high) == 0;
  return count;
}
#endif

#if defined(HPFREEZE_LINE_SCAN_AVX2)
__attribute__((target("avx2"))) std::uint64_t scan_avx2(const unsigned char* p, std::size_t begin,
                                                        std::size_t end, bool* ascii) {
  const __m256i cr = _mm256_set1_epi8('\r');
  const __m256i lf = _mm256_set1_epi8('\n');
  const __m256i zero = _mm256_setzero_si256();
  __m256i high = zero;
  std::uint64_t count = 0;
  std::size_t i = begin;
  while (end - i >= 32) {
    const std::size_t rounds = std::min<std::size_t>(255, (end - i) / 32);
    __m256i lanes = zero;
    for (std::size_t round = 0; round < rounds; ++round, i += 32) {
      const __m256i here = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      const __m256i before = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i - 1));
      const __m256i lf_alone =
          _mm256_andnot_si256(_mm256_cmpeq_epi8(before, cr), _mm256_cmpeq_epi8(here, lf));
      lanes = _mm256_sub_epi8(lanes, _mm256_or_si256(_mm256_cmpeq_epi8(here, cr), lf_alone));
      high = _mm256_or_si256(high, here);
    }
    const __m256i sums = _mm256_sad_epu8(lanes, zero);
    const __m128i halves =
        _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    count += static_cast<std::uint64_t>(_mm_cvtsi128_si64(halves)) +
             static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(halves, halves)));
  }
  bool tail_ascii = true;
  count += scan_scalar(p, i, end, &tail_ascii);
  *ascii = tail_ascii && _mm256_movemask_epi8(high) == 0;
  return count;
}
#endif

bool cpu_has_avx2() {
#if defined(HPFREEZE_LINE_SCAN_AVX2)
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") != 0);
  return has;
#else
  return false;
#endif
}

// The scan asked for, or the fastest this CPU runs below it.
TextLineCounter::ScanFunction scan_function(LineScan scan) {
#if defined(HPFREEZE_LINE_SCAN_AVX2)
  if (scan == LineScan::kAvx2 && cpu_has_avx2()) return scan_avx2;
#endif
#if defined(__SSE2__)
  if (scan != LineScan::kScalar) return scan_sse2;
#endif
  return scan_scalar;
}

// The bytes the vector scan goes over between two looks at whether UTF-8 must be checked
// byte by byte: 255 rounds of 32 bytes, small enough to be in the cache when it must.
constexpr std::size_t kScanBlock = 255 * 32;

}  // namespace

LineScan fastest_line_scan() {
  if (cpu_has_avx2()) return LineScan::kAvx2;
#if defined(__SSE2__)
  return LineScan::kSse2;
#else
  return LineScan::kScalar;
#endif
}

std::vector<LineScan> available_line_scans() {
  std::vector<LineScan> scans = {LineScan::kScalar};
#if defined(__SSE2__)
  scans.push_back(LineScan::kSse2);
#endif
  if (cpu_has_avx2()) scans.push_back(LineScan::kAvx2);
  return scans;
}

std::uint64_t count_line_ends(std::string_view bytes, LineScan scan) {
  if (bytes.empty()) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  bool ascii = true;
  return (p[0] == '\r' || p[0] == '\n') + scan_function(scan)(p, 1, bytes.size(), &ascii);
}

TextLineCounter::TextLineCounter(LineScan scan) : scan_(scan_function(scan)) {}

void TextLineCounter::feed(std::string_view bytes) {
  if (bytes.empty()) return;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  // The first byte ends a line unless it is the LF of a CRLF the last piece began.
  line_ends_ += p[0] == '\r' || (p[0] == '\n' && !ends_with_cr_);
  // UTF-8 is checked byte by byte only in the blocks that need it: one with a byte that
  // is not ASCII, or one after a character left unfinished.
  for (std::size_t begin = 0; begin < n;) {
    const std::size_t end = std::min(n, begin + kScanBlock);
    bool ascii = p[begin] < 0x80;
    bool rest_ascii = true;
    line_ends_ += scan_(p, begin + 1, end, &rest_ascii);
    if (utf8_ && (!ascii || !rest_ascii || pending_ != 0)) {
      check_utf8(bytes.substr(begin, end - begin));
    }
    // The next block's first byte has this block's last one before it.
    begin = end;
    if (begin < n) line_ends_ += p[begin] == '\r' || (p[begin] == '\n' && p[begin - 1] != '\r');
  }
  any_bytes_ = true;
  ends_with_cr_ = p[n - 1] == '\r';
  ends_with_line_end_ = ends_with_cr_ || p[n - 1] == '\n';
}

void TextLineCounter::check_utf8(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    if (pending_ == 0) {
      i = skip_ascii(p, i, n);
      if (i == n) break;
      const Utf8Lead lead = utf8_lead(p[i++]);
      if (lead.length == 0) {
        utf8_ = false;
        return;
      }
      pending_ = static_cast<unsigned char>(lead.length - 1);
      next_low_ = lead.second_low;
      next_high_ = lead.second_high;
    } else {
      const unsigned char byte = p[i++];
      if (byte < next_low_ || byte > next_high_) {
        utf8_ = false;
        return;
      }
      --pending_;
      next_low_ = 0x80;
      next_high_ = 0xBF;
    }
  }
}

std::optional<std::uint64_t> TextLineCounter::lines() const {
  if (!utf8_ || pending_ != 0) return std::nullopt;
  return line_ends_ + (any_bytes_ && !ends_with_line_end_ ? 1 : 0);
}

}  // namespace hpfreeze
