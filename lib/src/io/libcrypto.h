#pragma once
// OpenSSL's libcrypto, loaded the first time a command hashes a file (check --bundle) rather
// than at every start: linked, libcrypto's 17,000 relocations cost every process, `parse R`
// included, about 1.7 MiB of resident memory and twice the instructions of its whole run
// (docs/performance.md, docs/decisions.md). The calls are OpenSSL 3's EVP digest API, typed
// from its own headers, so a signature that changes fails the build.

#include <openssl/err.h>
#include <openssl/evp.h>

#include <string>

namespace hpfreeze {

struct Libcrypto {
  decltype(&EVP_MD_CTX_new) md_ctx_new = nullptr;
  decltype(&EVP_MD_CTX_free) md_ctx_free = nullptr;
  decltype(&EVP_sha256) sha256 = nullptr;
  decltype(&EVP_DigestInit_ex) digest_init_ex = nullptr;
  decltype(&EVP_DigestUpdate) digest_update = nullptr;
  decltype(&EVP_DigestFinal_ex) digest_final_ex = nullptr;
  decltype(&ERR_get_error) err_get_error = nullptr;
  decltype(&ERR_error_string_n) err_error_string_n = nullptr;
  decltype(&ERR_clear_error) err_clear_error = nullptr;
};

// The shared object the build's OpenSSL headers belong to ("libcrypto.so.3").
std::string libcrypto_soname();

// libcrypto's functions, loaded once per process (thread-safe) and kept loaded; null when it
// cannot be loaded, with `why` (when given) set to "cannot load libcrypto.so.3: <dlerror>".
const Libcrypto* libcrypto(std::string* why = nullptr);

}  // namespace hpfreeze
