// weft::random against jax.random results committed as JSON (tools/oracles/random.py writes
// tests/data/random_oracle/): every case runs under jit on the device and in the reference
// interpreter on the graph jit traced (a file's cases as one program), and the first case of each
// function eagerly. Random bits and integers must be JAX's exactly; floats within the case's ulps
// (see kErfInvUlps for normal's). Key arrays with leading dimensions are JAX's vmap over keys; a
// fori_loop splits its key inside.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/oracle_cases.h"
#include "weft/interp/interpreter.h"
#include "weft/random_key_array.h"
#include "weft/transforms/pmap.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

// normal and truncated_normal go through erf_inv, whose polynomial starts from
// w = -log1p(-x^2): XLA's CPU log1p and weft's (the interpreter's, the device's OpenCL log1p)
// differ by an ulp or two on some inputs, which the polynomial carries into the result as up
// to 3 ulps (its multiply-adds are single roundings in both, see fused_multiply_add). They are
// held to 4 ulps instead of the oracle's 1.
constexpr double kErfInvUlps = 4;
// In f64 the gap is wider: XLA's f64 log1p is up to ~130 ulps from the correctly rounded one
// that weft's device and interpreter use, which reaches erf_inv's result as up to ~30 ulps
// (seen over 600k JAX draws).
constexpr double kErfInvF64Ulps = 48;

// gumbel is -log(-log(u)): XLA's CPU log and weft's differ by an ulp on some inputs, and the
// outer log turns that relative error of -log(u) into an absolute one of about 2^-23 in the
// result, which is many ulps where the result is near 0. gumbel is held to that absolute error.
constexpr double kGumbelAbsolute = 4.0 / (1 << 23);
// The same in f64, where XLA's f64 log and the device's differ by an ulp on some inputs.
const double kGumbelF64Absolute = std::ldexp(4.0, -52);

// An array from its oracle form: integers as they are, f32 as IEEE bit patterns.
HostArray from_oracle(const json& spec) {
  const std::optional<DType> dtype = dtype_from_name(spec.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype in " + spec.dump());
  HostArray h(*dtype, spec.at("shape").get<Shape>());
  const json& bits = spec.at("bits");
  if (bits.size() != static_cast<std::size_t>(h.size()))
    throw std::runtime_error("wrong number of values in " + spec.dump());
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const json& b = bits.at(static_cast<std::size_t>(i));
    if (*dtype == DType::F32)
      h.view<float>()[static_cast<std::size_t>(i)] = std::bit_cast<float>(b.get<std::uint32_t>());
    else if (*dtype == DType::F64)
      h.view<double>()[static_cast<std::size_t>(i)] = std::bit_cast<double>(b.get<std::uint64_t>());
    else if (*dtype == DType::U64)
      h.view<std::uint64_t>()[static_cast<std::size_t>(i)] = b.get<std::uint64_t>();
    else if (*dtype == DType::U32)
      h.set_i64(i, static_cast<std::int64_t>(b.get<std::uint32_t>()));
    else
      h.set_i64(i, b.get<std::int64_t>());
  }
  return h;
}

std::int64_t ordered_f32(float v) {
  const auto b = std::bit_cast<std::int32_t>(v);
  return b < 0 ? -static_cast<std::int64_t>(b & 0x7fffffff) - 1 : b;
}

std::int64_t ordered_f64(double v) {
  const auto b = std::bit_cast<std::int64_t>(v);
  return b < 0 ? -(b & 0x7fffffffffffffff) - 1 : b;
}

std::string describe(const HostArray& h) {
  std::ostringstream out;
  out << dtype_name(h.dtype()) << shape_to_string(h.shape()) << " [";
  for (std::int64_t i = 0; i < std::min<std::int64_t>(h.size(), 12); ++i)
    out << (i ? ", " : "") << h.get_f64(i);
  out << (h.size() > 12 ? ", ...]" : "]");
  return out.str();
}

// Empty when got has want's dtype and shape and equal elements (f32 within `ulps`, or within
// `absolute` of want).
std::string difference(const HostArray& got, const HostArray& want, double ulps,
                       double absolute = 0) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + describe(got) + ", want " + describe(want);
  for (std::int64_t i = 0; i < want.size(); ++i) {
    bool same;
    if (want.dtype() == DType::F32) {
      const float g = got.view<float>()[static_cast<std::size_t>(i)];
      const float w = want.view<float>()[static_cast<std::size_t>(i)];
      same = std::isnan(w)
                 ? std::isnan(g)
                 : std::abs(static_cast<double>(ordered_f32(g) - ordered_f32(w))) <= ulps ||
                       std::abs(static_cast<double>(g) - w) <= absolute;
    } else if (want.dtype() == DType::F64) {
      const double g = got.view<double>()[static_cast<std::size_t>(i)];
      const double w = want.view<double>()[static_cast<std::size_t>(i)];
      same = std::isnan(w)
                 ? std::isnan(g)
                 : std::abs(static_cast<double>(ordered_f64(g) - ordered_f64(w))) <= ulps ||
                       std::abs(g - w) <= absolute;
    } else {
      same = got.get_i64(i) == want.get_i64(i);  // u64 too: the same bits
    }
    if (!same) {
      std::ostringstream out;
      out.precision(9);
      out << "element " << i << ": got " << got.get_f64(i) << ", want " << want.get_f64(i)
          << "\n  got  " << describe(got) << "\n  want " << describe(want);
      return out.str();
    }
  }
  return {};
}

json load(const std::string& file) {
  std::ifstream in(std::string(WEFT_RANDOM_ORACLE_DIR) + "/" + file);
  if (!in) throw std::runtime_error("cannot read " + file);
  return json::parse(in).at("cases");
}

Shape shape_param(const json& params) {
  return params.contains("shape") ? params.at("shape").get<Shape>() : Shape{};
}

// The weft call for an oracle case.
Array sample(const std::string& fn, const json& p, const Array& key) {
  if (fn == "bits")
    return random::bits(
        key, shape_param(p),
        p.contains("dtype") ? *dtype_from_name(p.at("dtype").get<std::string>()) : DType::U32);
  if (fn == "uniform_f64")
    return random::uniform(key, shape_param(p), DType::F64, p.at("minval").get<double>(),
                           p.at("maxval").get<double>());
  if (fn == "split") return random::split(key, p.at("num").get<std::int64_t>());
  if (fn == "fold_in") return random::fold_in(key, p.at("data").get<std::uint32_t>());
  if (fn == "uniform")
    return random::uniform(key, shape_param(p), DType::F32, p.at("minval").get<double>(),
                           p.at("maxval").get<double>());
  if (fn == "normal") return random::normal(key, shape_param(p));
  if (fn == "truncated_normal")
    return random::truncated_normal(key, p.at("lower").get<double>(), p.at("upper").get<double>(),
                                    shape_param(p));
  if (fn == "bernoulli") return random::bernoulli(key, p.at("p").get<double>(), shape_param(p));
  if (fn == "randint")
    return random::randint(key, shape_param(p), p.at("minval").get<std::int64_t>(),
                           p.at("maxval").get<std::int64_t>());
  if (fn == "gumbel") return random::gumbel(key, shape_param(p));
  if (fn == "normal_f64") return random::normal(key, shape_param(p), DType::F64);
  if (fn == "truncated_normal_f64")
    return random::truncated_normal(key, p.at("lower").get<double>(), p.at("upper").get<double>(),
                                    shape_param(p), DType::F64);
  if (fn == "gumbel_f64") return random::gumbel(key, shape_param(p), DType::F64);
  if (fn == "truncated_normal_f64")
    return random::truncated_normal(key, p.at("lower").get<double>(), p.at("upper").get<double>(),
                                    shape_param(p), DType::F64);
  if (fn == "categorical") {
    const Shape logits_shape = p.at("logits_shape").get<Shape>();
    const Array logits =
        p.value("f64", false)
            ? Array::from_vector<double>(logits_shape, p.at("logits").get<std::vector<double>>())
            : Array::from_vector<float>(logits_shape, p.at("logits").get<std::vector<float>>());
    return random::categorical(
        key, logits, p.at("axis").get<std::int64_t>(),
        p.contains("shape") ? std::optional<Shape>(shape_param(p)) : std::nullopt);
  }
  if (fn == "permutation_n") return random::permutation(key, p.at("n").get<std::int64_t>());
  if (fn == "permutation" || fn == "shuffle") {
    const Array x = Array::from_vector<std::int32_t>(p.at("x_shape").get<Shape>(),
                                                     p.at("x").get<std::vector<std::int32_t>>());
    const auto axis = p.at("axis").get<std::int64_t>();
    if (fn == "shuffle") return random::shuffle(key, x, axis);
    return random::permutation(key, x, axis, p.at("independent").get<bool>());
  }
  if (fn == "choice") {
    std::optional<Array> probabilities;
    if (!p.at("p").is_null()) {
      const auto values = p.at("p").get<std::vector<float>>();
      probabilities = Array::from_vector<float>({static_cast<std::int64_t>(values.size())}, values);
    }
    const bool replace = p.at("replace").get<bool>();
    if (p.at("a").is_number())
      return random::choice(key, p.at("a").get<std::int64_t>(), shape_param(p), replace,
                            probabilities);
    const Array a = Array::from_vector<std::int32_t>(p.at("a_shape").get<Shape>(),
                                                     p.at("a").get<std::vector<std::int32_t>>());
    return random::choice(key, a, shape_param(p), replace, probabilities,
                          p.at("axis").get<std::int64_t>());
  }
  throw std::runtime_error("no weft function for oracle fn " + fn);
}

double case_ulps(const json& c) {
  const std::string fn = c.at("fn");
  const double ulps = c.value("ulps", 0.0);
  if (fn == "normal_f64" || fn == "truncated_normal_f64") return std::max(ulps, kErfInvF64Ulps);
  return fn == "normal" || fn == "truncated_normal" ? std::max(ulps, kErfInvUlps) : ulps;
}

// Every case of the file in one jit program, on the device and in the interpreter; eagerly the
// first case of each function on each key rank (batched keys are vmap's path).
void run_file(const std::string& file) {
  const json cases = load(file);
  std::vector<testing::OracleCase> table;
  for (const json& c : cases) {
    const std::string fn = c.at("fn");
    const json params = c.at("params");
    const HostArray key = from_oracle(c.at("key"));
    const double ulps = case_ulps(c);
    const double absolute = fn == "gumbel"       ? kGumbelAbsolute
                            : fn == "gumbel_f64" ? kGumbelF64Absolute
                                                 : 0;
    table.push_back({.name = file + ": " + c.at("name").get<std::string>(),
                     .eager_group = fn + " " + params.value("dtype", "") + " key rank " +
                                    std::to_string(key.shape().size()),
                     .args = {key},
                     .expected = {from_oracle(c.at("expected"))},
                     .fn =
                         [fn, params](const std::vector<Array>& xs) {
                           return std::vector<Array>{sample(fn, params, xs[0])};
                         },
                     .compare =
                         [ulps, absolute](const HostArray& got, const HostArray& want) {
                           return difference(got, want, ulps, absolute);
                         }});
  }
  testing::expect_oracle_cases(table, "random_cases");
}

TEST(Random, KeysFromSeedsMatchJax) {
  for (const json& c : load("keys.json")) {
    const auto seed = c.at("seed").get<std::int64_t>();
    SCOPED_TRACE(c.at("name").get<std::string>());
    EXPECT_EQ(difference(random::PRNGKey(seed).to_host(), from_oracle(c.at("expected")), 0), "");
    EXPECT_EQ(difference(random::key(seed).to_host(), from_oracle(c.at("typed")), 0), "");
  }
  // JAX keeps a seed's low 32 bits (x64 off): 2^32 + 5 gives the key of 5.
  EXPECT_EQ(difference(random::PRNGKey((std::int64_t{1} << 32) + 5).to_host(),
                       random::PRNGKey(5).to_host(), 0),
            "");
}

TEST(Random, SplitFoldInAndBitsMatchJax) {
  run_file("core.json");
}

TEST(Random, SamplersMatchJax) {
  run_file("samplers.json");
}

// The sort-based samplers build sort kernels: every case runs in one jit program (checked on the
// device and in the interpreter), and only the first case also runs eagerly.
TEST(Random, PermutationShuffleAndChoiceMatchJax) {
  std::vector<testing::OracleCase> table;
  for (const json& c : load("permutation.json")) {
    const std::string fn = c.at("fn");
    const json params = c.at("params");
    table.push_back({.name = "permutation.json: " + c.at("name").get<std::string>(),
                     .eager_group = "the first case",
                     .args = {from_oracle(c.at("key"))},
                     .expected = {from_oracle(c.at("expected"))},
                     .fn =
                         [fn, params](const std::vector<Array>& xs) {
                           return std::vector<Array>{sample(fn, params, xs[0])};
                         },
                     .compare = [](const HostArray& got,
                                   const HostArray& want) { return difference(got, want, 0); }});
  }
  testing::expect_oracle_cases(table, "random_permutation_cases");
}

TEST(Random, ChoiceRefusalsExplainThemselves) {
  const Array k = random::key(0);
  EXPECT_THROW(random::choice(k, 3, {4}, false), InvalidArgumentError);
  EXPECT_THROW(random::choice(k, 0, {2}), InvalidArgumentError);
  EXPECT_THROW(random::choice(k, 3, {2}, true, Array::from_vector<float>({2}, {0.5f, 0.5f})),
               ShapeError);
  EXPECT_THROW(random::permutation(k, lax::constant(3, DType::I32)), ShapeError);
}

// u64 words and the f64 samplers (uniform, normal, truncated_normal, gumbel, categorical), against
// JAX with x64
// on.
TEST(Random, WideBitsAndF64SamplersMatchJaxWithX64) {
  if (!default_device().supports(DType::F64) || !default_device().supports(DType::U64))
    GTEST_SKIP() << "the default device has no f64 or u64";
  run_file("x64.json");
}

// jax.lax.fori_loop(0, 5, body, (key, acc)) with body splitting the key and adding
// uniform(sub) * (i + 1): the same final key and sums, under jit and eagerly.
TEST(Random, ForiLoopWithSplitInsideMatchesJax) {
  const json c = load("loops.json").at(0);
  const HostArray key = from_oracle(c.at("key"));
  const std::int64_t steps = c.at("steps");
  auto run = [steps](const std::vector<Array>& xs) {
    using Carry = std::pair<Array, Array>;
    const Carry out = lax::fori_loop(
        0, steps,
        [](const Array& i, const Carry& carry) {
          const auto [next, sub] = random::split2(carry.first);
          const Array scale =
              lax::convert_element_type(lax::add(i, lax::constant(1, DType::I32)), DType::F32);
          return Carry{next, carry.second + random::uniform(sub, {7}) * scale};
        },
        Carry{xs[0], np::zeros({7})});
    return std::vector<Array>{out.first, out.second};
  };
  const double ulps = c.at("ulps");
  const std::vector<Array> eager = run({Array::from_host(key)});
  EXPECT_EQ(difference(eager[0].to_host(), from_oracle(c.at("expected_key")), 0), "") << "eager";
  EXPECT_EQ(difference(eager[1].to_host(), from_oracle(c.at("expected")), ulps), "") << "eager";
  auto traced = jit(run, {.name = "random_fori"});
  const std::vector<Array> jitted = traced(std::vector<Array>{Array::from_host(key)});
  EXPECT_EQ(difference(jitted[0].to_host(), from_oracle(c.at("expected_key")), 0), "") << "jit";
  EXPECT_EQ(difference(jitted[1].to_host(), from_oracle(c.at("expected")), ulps), "") << "jit";
}

// A vmap written by the user over split keys gives what the batched key array gives (which
// the oracle checks against JAX's vmap).
TEST(Random, UserVmapOverKeysEqualsBatchedKeys) {
  const Array keys = random::split(random::key(7), 5);
  auto one = [](const Array& k) { return random::normal(k, {3, 4}); };
  const HostArray mapped = vmap(std::function<Array(const Array&)>(one))(keys).to_host();
  EXPECT_EQ(difference(mapped, random::normal(keys, {3, 4}).to_host(), 0), "");
  const HostArray first =
      random::normal(lax::reshape(lax::slice(keys, {0, 0}, {1, 2}), {2}), {3, 4}).to_host();
  const HostArray mapped_first =
      lax::reshape(lax::slice(Array::from_host(mapped), {0, 0, 0}, {1, 3, 4}), {3, 4}).to_host();
  EXPECT_EQ(difference(mapped_first, first, 0), "");
}

// Under pmap each device draws from its own key; the stacked results equal the batched keys'.
TEST(Random, PmapOverKeysEqualsBatchedKeys) {
  const std::int64_t n = static_cast<std::int64_t>(devices().size());
  const Array keys = random::split(random::key(11), n);
  ArrayFunction draw = [](const std::vector<Array>& xs) {
    return std::vector<Array>{random::bits(xs[0], {9})};
  };
  const HostArray got = pmap(draw)({keys}).at(0).to_host();
  EXPECT_EQ(difference(got, random::bits(keys, {9}).to_host(), 0), "");
}

// Typed keys (jax.random.key) hold the raw keys' data: the same splits, folds and samples as
// JAX's typed keys, eagerly, under jit (key data in, wrapped inside), vmap and a fori_loop
// carrying the key data (JAX's lax.scan over a typed key), and pmap.
TEST(Random, TypedKeysMatchJaxTypedKeys) {
  const json c = load("typed_keys.json").at(0);
  const random::KeyArray key = random::typed_key(42);
  EXPECT_EQ(key.shape(), Shape{});
  EXPECT_EQ(key.to_string(), c.at("repr_single").get<std::string>());
  const random::KeyArray subkeys = random::split(key, 3);
  EXPECT_EQ(subkeys.shape(), Shape{3});
  EXPECT_EQ(subkeys.to_string(), c.at("repr_split").get<std::string>());
  EXPECT_EQ(difference(random::key_data(subkeys).to_host(), from_oracle(c.at("split3")), 0), "");
  const random::KeyArray grid = random::split(key, Shape{2, 3});
  EXPECT_EQ(grid.to_string(), "Array((2, 3), dtype=key<fry>)");
  EXPECT_EQ(difference(grid.data().to_host(), from_oracle(c.at("split23")), 0), "");
  EXPECT_EQ(
      difference(grid.reshape({6}).slice(3, 6).data().to_host(),
                 lax::reshape(lax::slice(grid.data(), {1, 0, 0}, {2, 3, 2}), {3, 2}).to_host(), 0),
      "");
  EXPECT_EQ(difference(random::fold_in(key, 7u).data().to_host(), from_oracle(c.at("fold_in7")), 0),
            "");
  const HostArray normal_of_subkey = from_oracle(c.at("normal_of_subkey1"));
  EXPECT_EQ(difference(random::normal(subkeys[1], {7}).to_host(), normal_of_subkey, kErfInvUlps),
            "");
  EXPECT_EQ(difference(random::normal(subkeys[-2], {7}).to_host(), normal_of_subkey, kErfInvUlps),
            "");
  // jit and vmap take the key data and wrap it inside.
  auto traced = jit(
      [](const std::vector<Array>& xs) {
        const random::KeyArray k = random::wrap_key_data(xs[0]);
        return std::vector<Array>{random::normal(random::split(k, 3)[1], {7})};
      },
      {.name = "typed_key_jit"});
  EXPECT_EQ(difference(traced(std::vector<Array>{key.data()}).at(0).to_host(), normal_of_subkey,
                       kErfInvUlps),
            "");
  auto one = [](const Array& data) { return random::uniform(random::wrap_key_data(data), {7}); };
  EXPECT_EQ(difference(vmap(std::function<Array(const Array&)>(one))(subkeys.data()).to_host(),
                       from_oracle(c.at("uniform_vmap")), 1),
            "");
  // lax.scan(body, typed_key, length=3) with body splitting the key and drawing uniform(sub).
  using Carry = std::pair<Array, Array>;
  const Carry scanned = lax::fori_loop(
      0, 3,
      [](const Array& i, const Carry& carry) {
        const random::KeyArray next = random::split(random::wrap_key_data(carry.first), 2);
        const Array draw = lax::reshape(random::uniform(next[1], {7}), {1, 7});
        return Carry{next[0].data(), lax::dynamic_update_slice(carry.second, draw,
                                                               {i, lax::constant(0, DType::I32)})};
      },
      Carry{key.data(), np::zeros({3, 7})});
  EXPECT_EQ(difference(scanned.first.to_host(), from_oracle(c.at("scan_key")), 0), "");
  EXPECT_EQ(difference(scanned.second.to_host(), from_oracle(c.at("scan_draws")), 1), "");
  // pmap: each device draws from its typed key, passed as key data.
  const random::KeyArray device_keys =
      random::split(random::typed_key(11), static_cast<std::int64_t>(devices().size()));
  ArrayFunction draw = [](const std::vector<Array>& xs) {
    return std::vector<Array>{random::bits(random::wrap_key_data(xs[0]), {9})};
  };
  EXPECT_EQ(difference(pmap(draw)({device_keys.data()}).at(0).to_host(),
                       random::bits(device_keys, {9}).to_host(), 0),
            "");
}

TEST(Random, TypedKeyMisuseExplainsItself) {
  auto message_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string three_words = message_of([] {
    random::wrap_key_data(Array::from_vector<std::uint32_t>({3}, {1, 2, 3}));
  });
  EXPECT_NE(three_words.find("u32[3]"), std::string::npos) << three_words;
  EXPECT_NE(three_words.find("reshape"), std::string::npos) << three_words;
  const std::string floats = message_of([] {
    random::wrap_key_data(Array::from_vector<float>({2}, {1.0f, 2.0f}));
  });
  EXPECT_NE(floats.find("f32[2]"), std::string::npos) << floats;
  EXPECT_NE(floats.find("random::typed_key"), std::string::npos) << floats;
  EXPECT_THROW(random::wrap_key_data(Array::from_vector<float>({2}, {1.0f, 2.0f})), DTypeError);
  EXPECT_THROW(random::typed_key(0)[0], ShapeError);
  EXPECT_THROW(random::split(random::typed_key(0), 3)[3], InvalidArgumentError);
}

TEST(Random, RefusalsExplainThemselves) {
  const Array not_a_key = Array::from_vector<float>({2}, {1.0f, 2.0f});
  try {
    random::bits(not_a_key, {3});
    ADD_FAILURE() << "an f32 key was accepted";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("u32[..., 2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(random::bits(Array::from_vector<std::uint32_t>({3}, {1, 2, 3}), {3}), ShapeError);
  try {
    random::truncated_normal(random::key(0), -1.0, 1.0, {3}, DType::F16);
    ADD_FAILURE() << "f16 truncated_normal was accepted";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("convert an f32 sample"), std::string::npos) << e.what();
  }
  try {
    random::choice(random::key(0), 3, {2}, true, Array::from_vector<double>({3}, {0.2, 0.3, 0.5}));
    ADD_FAILURE() << "f64 choice probabilities were accepted";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("not written yet"), std::string::npos) << e.what();
  }
  EXPECT_THROW(random::bits(random::key(0), {3}, DType::I32), DTypeError);
  EXPECT_THROW(random::randint(random::key(0), {3}, 0, std::int64_t{1} << 40),
               InvalidArgumentError);
  EXPECT_THROW(random::categorical(random::key(0), np::zeros({3}), 1), ShapeError);
}

}  // namespace
}  // namespace weft
