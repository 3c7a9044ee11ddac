// A program built against an installed weft through find_package(weft): checks that the
// exported targets carry their include paths, definitions and link dependencies.
#include <weft/weft.h>

#include <iostream>

int main() {
  using namespace weft;
  auto f = jit([](const Array& x) { return np::sum(x * 2.0); });
  const float total = f(np::ones({10})).item<float>();
  if (total != 20.0f) {
    std::cerr << "expected 20, got " << total << "\n";
    return 1;
  }
  std::cout << "installed weft works: " << total << "\n";
  return 0;
}
