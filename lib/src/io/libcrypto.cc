#include "io/libcrypto.h"

#include <dlfcn.h>
#include <openssl/opensslv.h>

#include <optional>
#include <string>

namespace hpfreeze {

namespace {

#define HPFREEZE_STRINGIZE_VALUE(x) HPFREEZE_STRINGIZE(x)
#define HPFREEZE_STRINGIZE(x) #x

struct Loaded {
  std::optional<Libcrypto> functions;
  std::string why;
};

template <typename Function>
bool find(void* handle, const char* name, Function& function, std::string& why) {
  void* symbol = ::dlsym(handle, name);
  if (symbol == nullptr) {
    const char* error = ::dlerror();
    why = "cannot load " + libcrypto_soname() + ": " + (error != nullptr ? error : name);
    return false;
  }
  function = reinterpret_cast<Function>(symbol);
  return true;
}

Loaded load() {
  Loaded loaded;
  // RTLD_LOCAL: its symbols serve these pointers only; never unloaded (the pointers stay
  // valid for the life of the process).
  void* handle = ::dlopen(libcrypto_soname().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    loaded.why =
        "cannot load " + libcrypto_soname() + ": " + (error != nullptr ? error : "unknown error");
    return loaded;
  }
  Libcrypto f;
  std::string& why = loaded.why;
  if (find(handle, "EVP_MD_CTX_new", f.md_ctx_new, why) &&
      find(handle, "EVP_MD_CTX_free", f.md_ctx_free, why) &&
      find(handle, "EVP_sha256", f.sha256, why) &&
      find(handle, "EVP_DigestInit_ex", f.digest_init_ex, why) &&
      find(handle, "EVP_DigestUpdate", f.digest_update, why) &&
      find(handle, "EVP_DigestFinal_ex", f.digest_final_ex, why) &&
      find(handle, "ERR_get_error", f.err_get_error, why) &&
      find(handle, "ERR_error_string_n", f.err_error_string_n, why) &&
      find(handle, "ERR_clear_error", f.err_clear_error, why)) {
    loaded.functions = f;
  }
  return loaded;
}

}  // namespace

std::string libcrypto_soname() {
  return "libcrypto.so." HPFREEZE_STRINGIZE_VALUE(OPENSSL_SHLIB_VERSION);
}

const Libcrypto* libcrypto(std::string* why) {
  static const Loaded loaded = load();  // once, thread-safe
  if (!loaded.functions && why != nullptr) *why = loaded.why;
  return loaded.functions ? &*loaded.functions : nullptr;
}

}  // namespace hpfreeze
