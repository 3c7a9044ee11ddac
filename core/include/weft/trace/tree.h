// Flattening of jit arguments and results: Arrays are leaves; tuples, pairs, std::array,
// vectors and string-keyed maps are containers; plain values (numbers, strings, enums) are
// static arguments whose values are part of the signature the function is traced for.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/array.h"

namespace weft {

template <typename T, typename Enable = void>
struct TreeTraits;

template <>
struct TreeTraits<Array> {
  static void flatten(const Array& a, std::vector<Array>& leaves, std::string& sig) {
    leaves.push_back(a);
    sig += 'A';
  }
  static Array rebuild(const Array&, const std::vector<Array>& leaves, std::size_t& pos) {
    return leaves.at(pos++);
  }
};

// Static values: their exact value goes into the signature.
template <typename T>
struct TreeTraits<T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>> {
  static void flatten(const T& v, std::vector<Array>&, std::string& sig) {
    sig += "s(";
    if constexpr (std::is_floating_point_v<T>) {
      sig += std::to_string(std::bit_cast<std::uint64_t>(static_cast<double>(v)));
    } else if constexpr (std::is_enum_v<T>) {
      sig += std::to_string(static_cast<long long>(v));
    } else {
      sig += std::to_string(v);
    }
    sig += ')';
  }
  static T rebuild(const T& proto, const std::vector<Array>&, std::size_t&) { return proto; }
};

template <>
struct TreeTraits<std::string> {
  static void flatten(const std::string& v, std::vector<Array>&, std::string& sig) {
    sig += "str" + std::to_string(v.size()) + ":" + v;
  }
  static std::string rebuild(const std::string& proto, const std::vector<Array>&, std::size_t&) {
    return proto;
  }
};

template <typename... Ts>
struct TreeTraits<std::tuple<Ts...>> {
  static void flatten(const std::tuple<Ts...>& t, std::vector<Array>& leaves, std::string& sig) {
    sig += "t(";
    std::apply(
        [&](const auto&... e) {
          (TreeTraits<std::decay_t<decltype(e)>>::flatten(e, leaves, sig), ...);
        },
        t);
    sig += ')';
  }
  static std::tuple<Ts...> rebuild(const std::tuple<Ts...>& proto, const std::vector<Array>& leaves,
                                   std::size_t& pos) {
    // Braced initialisation evaluates left to right, which keeps leaves in order.
    return std::apply(
        [&](const auto&... e) {
          return std::tuple<Ts...>{
              TreeTraits<std::decay_t<decltype(e)>>::rebuild(e, leaves, pos)...};
        },
        proto);
  }
};

template <typename A, typename B>
struct TreeTraits<std::pair<A, B>> {
  static void flatten(const std::pair<A, B>& p, std::vector<Array>& leaves, std::string& sig) {
    sig += "p(";
    TreeTraits<A>::flatten(p.first, leaves, sig);
    TreeTraits<B>::flatten(p.second, leaves, sig);
    sig += ')';
  }
  static std::pair<A, B> rebuild(const std::pair<A, B>& proto, const std::vector<Array>& leaves,
                                 std::size_t& pos) {
    A first = TreeTraits<A>::rebuild(proto.first, leaves, pos);
    B second = TreeTraits<B>::rebuild(proto.second, leaves, pos);
    return {std::move(first), std::move(second)};
  }
};

template <typename T>
struct TreeTraits<std::vector<T>> {
  static void flatten(const std::vector<T>& v, std::vector<Array>& leaves, std::string& sig) {
    sig += "v" + std::to_string(v.size()) + "(";
    for (const auto& e : v) TreeTraits<T>::flatten(e, leaves, sig);
    sig += ')';
  }
  static std::vector<T> rebuild(const std::vector<T>& proto, const std::vector<Array>& leaves,
                                std::size_t& pos) {
    std::vector<T> out;
    out.reserve(proto.size());
    for (const auto& e : proto) out.push_back(TreeTraits<T>::rebuild(e, leaves, pos));
    return out;
  }
};

template <typename T, std::size_t N>
struct TreeTraits<std::array<T, N>> {
  static void flatten(const std::array<T, N>& v, std::vector<Array>& leaves, std::string& sig) {
    sig += "a(";
    for (const auto& e : v) TreeTraits<T>::flatten(e, leaves, sig);
    sig += ')';
  }
  static std::array<T, N> rebuild(const std::array<T, N>& proto, const std::vector<Array>& leaves,
                                  std::size_t& pos) {
    std::array<T, N> out;
    for (std::size_t i = 0; i < N; ++i) out[i] = TreeTraits<T>::rebuild(proto[i], leaves, pos);
    return out;
  }
};

template <typename T>
struct TreeTraits<std::map<std::string, T>> {
  static void flatten(const std::map<std::string, T>& m, std::vector<Array>& leaves,
                      std::string& sig) {
    sig += "m(";
    for (const auto& [k, v] : m) {
      sig += std::to_string(k.size()) + ":" + k;
      TreeTraits<T>::flatten(v, leaves, sig);
    }
    sig += ')';
  }
  static std::map<std::string, T> rebuild(const std::map<std::string, T>& proto,
                                          const std::vector<Array>& leaves, std::size_t& pos) {
    std::map<std::string, T> out;
    for (const auto& [k, v] : proto) out.emplace(k, TreeTraits<T>::rebuild(v, leaves, pos));
    return out;
  }
};

}  // namespace weft
