// open_loop: RocksDB at a fixed offered rate, each request's latency measured from when it was due.
//
// db_bench's rate limit is closed loop: a writer that stalls issues fewer requests and a stall counts
// as one slow sample (coordinated omission). Here every thread follows its own schedule of arrivals
// (constant gaps or Poisson, at rate / threads), sleeps until each request is due and, when it is late,
// issues at once; a request's latency runs from its due time to its completion, as wrk2 and YCSB's
// intended-time measurement count it. Requests still due inside the window when it ends are counted
// with the latency they had waited by then (a lower bound), so a configuration that falls behind shows
// it in its tail and in "delivered" (completed / due).
//
//   open_loop load --db DIR [--options FILE] --data BYTES [--age BYTES]
//       keys 0..N-1 in order (N = BYTES / (key_size + value_size)), WAL off (on where the configuration
//       recycles WAL files, which RocksDB refuses writes without a WAL with), then flush and wait for
//       compaction: the DB a run starts from. With --age, then random overwrites of that many bytes, as
//       fast as they go, and flush and compaction again: the levels of a DB that has served overwrites
//       (a DB loaded in order keeps one sorted run in its last level, and its first minute at a rate
//       compacts into empty levels, a honeymoon no serving DB has).
//   open_loop run --db DIR [--options FILE] --data BYTES --rate OPS [--duration S] [--read_rate OPS]
//                 [--settle S] [--windows S[,S...]]
//       writes (overwrites of random keys) at --rate and reads (random Gets) at --read_rate for
//       --duration seconds; prints a {"series": [...]} line (one entry a second: the requests' tail and,
//       to tell what paused them, RocksDB's longest call, the latest wake-up, the background's writes, the
//       request threads' wait for a CPU and the host's busy and stolen CPU time) and a metrics line.
//       With --settle S the load goes on after the window while RocksDB flushes what the window wrote
//       and finishes the compaction it left, for at most S more seconds, and every request of that time
//       counts: work a configuration defers past the window is paid for while serving, as a service
//       pays for it (settle_s says how long it took, settled whether it finished). With --windows 60 a
//       {"windows": [...]} line gives the tail of each consecutive 60-second window of the run. With
//       --background_priority low, RocksDB's flush and compaction threads run at the lowest CPU priority
//       (Env::LowerThreadPoolCPUPriority, nice 19): a host with few cores serves the requests first. With
//       --slow_call_us T, where the time of each RocksDB call slower than T went: RocksDB's PerfContext and
//       IOStatsContext of the calling thread (PerfLevel kEnableTime) and the thread's CPU time, summed over
//       the slow calls (slow_calls.<part>_us) and for the slowest call alone (slowest_call.<part>_us); and
//       where in the kernel they waited: a watcher thread reads a request thread's kernel stack
//       (/proc/self/task/TID/stack, readable by root) as its call passes each whole multiple of T, and a
//       {"kernel_waits": [...]} line counts the samples by stack (each stands for T of a call's time).
//       Its timers add to every call's time and the watcher wakes every T/4, so it is off by default.
//
// Without --options the DB opens with a default-constructed rocksdb::Options (the library's defaults);
// with it, with the file's DBOptions and default column family (ignoring keys this version lacks).
// Keys and values are db_bench's: an 8-byte big-endian key padded with '0' to --key_size, values made
// of random printable pieces repeated to --compression_ratio (0.5) of their length.
// Built beside each release db_bench by objectives/build/build_db_bench.sh; run by objectives/open_loop.py.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "latency_histogram.h"
#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/iostats_context.h"
#include "rocksdb/options.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "rocksdb/statistics.h"
#include "rocksdb/utilities/options_util.h"
#include "rocksdb/version.h"

namespace rdb = ROCKSDB_NAMESPACE;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string mode, db, options;
  uint64_t data = 0, age = 0;
  double rate = 0, read_rate = 0, duration = 60, settle = 0;
  int threads = 1, read_threads = 1;
  int key_size = 16, value_size = 100;
  double compression_ratio = 0.5;
  bool poisson = false;
  bool background_low = false;  // --background_priority low: RocksDB's flush and compaction threads at nice 19
  uint64_t slow_call_ns = 0;  // --slow_call_us: calls slower than this have their time broken down (0: none)
  uint64_t seed = 1;
  std::vector<int> windows;  // --windows: lengths in seconds of the consecutive windows to report the tail of
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "open_loop: %s\nusage: open_loop load --db DIR [--options FILE] --data BYTES [--age BYTES]\n"
               "       open_loop run --db DIR [--options FILE] --data BYTES --rate OPS [--duration S] [--threads N]\n"
               "                     [--read_rate OPS] [--read_threads N] [--arrivals constant|poisson] [--seed N]\n"
               "                     [--settle S] [--windows S[,S...]] [--background_priority normal|low]\n"
               "                     [--slow_call_us T]\n"
               "                     [--key_size 16] [--value_size 100] [--compression_ratio 0.5]\n",
               why.c_str());
  std::exit(2);
}

double Number(const std::string& flag, const char* text) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v) || v < 0) Usage(flag + ": not a number >= 0: " + text);
  return v;
}

Args Parse(int argc, char** argv) {
  Args a;
  if (argc < 2) Usage("give a mode, load or run");
  a.mode = argv[1];
  if (a.mode != "load" && a.mode != "run") Usage("unknown mode " + a.mode + " (load or run)");
  for (int i = 2; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc) Usage(flag + ": needs a value");
    const char* v = argv[i + 1];
    if (flag == "--db") a.db = v;
    else if (flag == "--options") a.options = v;
    else if (flag == "--data") a.data = static_cast<uint64_t>(Number(flag, v));
    else if (flag == "--age") a.age = static_cast<uint64_t>(Number(flag, v));
    else if (flag == "--rate") a.rate = Number(flag, v);
    else if (flag == "--read_rate") a.read_rate = Number(flag, v);
    else if (flag == "--duration") a.duration = Number(flag, v);
    else if (flag == "--settle") a.settle = Number(flag, v);
    else if (flag == "--threads") a.threads = static_cast<int>(Number(flag, v));
    else if (flag == "--read_threads") a.read_threads = static_cast<int>(Number(flag, v));
    else if (flag == "--key_size") a.key_size = static_cast<int>(Number(flag, v));
    else if (flag == "--value_size") a.value_size = static_cast<int>(Number(flag, v));
    else if (flag == "--compression_ratio") a.compression_ratio = Number(flag, v);
    else if (flag == "--seed") a.seed = static_cast<uint64_t>(Number(flag, v));
    else if (flag == "--slow_call_us") a.slow_call_ns = static_cast<uint64_t>(Number(flag, v) * 1000);
    else if (flag == "--windows") {
      for (const char* p = v; *p;) {
        const char* comma = std::strchr(p, ',');
        const std::string one(p, comma ? static_cast<size_t>(comma - p) : std::strlen(p));
        const double s = Number(flag, one.c_str());
        if (s < 1 || s != std::floor(s)) Usage("--windows: whole seconds >= 1, not " + one);
        a.windows.push_back(static_cast<int>(s));
        p = comma ? comma + 1 : p + one.size();
      }
    }
    else if (flag == "--background_priority") {
      std::string s = v;
      if (s != "normal" && s != "low") Usage("--background_priority: normal or low, not " + s);
      a.background_low = s == "low";
    }
    else if (flag == "--arrivals") {
      std::string s = v;
      if (s != "constant" && s != "poisson") Usage("--arrivals: constant or poisson, not " + s);
      a.poisson = s == "poisson";
    } else Usage("unknown flag " + flag);
  }
  if (a.db.empty()) Usage("--db: give the DB directory");
  if (a.key_size < 8) Usage("--key_size: at least 8");
  if (a.value_size < 1) Usage("--value_size: at least 1");
  if (a.data < static_cast<uint64_t>(a.key_size + a.value_size)) Usage("--data: give the DB's data in bytes");
  if (a.mode == "run") {
    if (a.rate <= 0 && a.read_rate <= 0) Usage("--rate or --read_rate: give an offered rate in operations/s");
    if (a.duration <= 0) Usage("--duration: give the run's length in seconds");
    if (a.threads < 1 || a.read_threads < 1) Usage("--threads, --read_threads: at least 1");
  }
  return a;
}

void Check(const rdb::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "open_loop: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

std::unique_ptr<rdb::DB> Open(const Args& a, std::shared_ptr<rdb::Statistics> stats) {
  rdb::Options options;
  if (!a.options.empty()) {
    rdb::ConfigOptions config;
    config.ignore_unknown_options = true;
    config.input_strings_escaped = true;
    rdb::DBOptions db_options;
    std::vector<rdb::ColumnFamilyDescriptor> cfs;
    Check(rdb::LoadOptionsFromFile(config, a.options, &db_options, &cfs), "loading --options");
    auto it = std::find_if(cfs.begin(), cfs.end(),
                           [](const rdb::ColumnFamilyDescriptor& d) { return d.name == rdb::kDefaultColumnFamilyName; });
    if (it == cfs.end()) Check(rdb::Status::InvalidArgument("no default column family in the file"), "--options");
    options = rdb::Options(db_options, it->options);
  }
  options.create_if_missing = true;
  options.statistics = std::move(stats);
  if (a.background_low)  // the request threads before RocksDB's own: its thread pools at the lowest nice
    for (const auto pool : {rdb::Env::Priority::LOW, rdb::Env::Priority::HIGH})
      Check(options.env->LowerThreadPoolCPUPriority(pool, rdb::CpuPriority::kLow), "--background_priority");
#if ROCKSDB_MAJOR >= 11  // DB::Open returns a std::unique_ptr from 11.0
  std::unique_ptr<rdb::DB> db;
  Check(rdb::DB::Open(options, a.db, &db), "opening the DB");
#else
  rdb::DB* raw = nullptr;
  Check(rdb::DB::Open(options, a.db, &raw), "opening the DB");
  std::unique_ptr<rdb::DB> db(raw);
#endif
  return db;
}

uint64_t IntProperty(rdb::DB* db, const std::string& name) {
  uint64_t v = 0;
  return db->GetIntProperty(name, &v) ? v : 0;
}

// Waits until no flush or compaction runs or is pending.
void WaitForCompaction(rdb::DB* db) {
  Check(db->Flush(rdb::FlushOptions()), "flush");
#if ROCKSDB_MAJOR > 8 || (ROCKSDB_MAJOR == 8 && ROCKSDB_MINOR >= 7)
  Check(db->WaitForCompact(rdb::WaitForCompactOptions()), "waiting for compaction");
#else
  for (;;) {
    if (IntProperty(db, "rocksdb.num-running-compactions") == 0 && IntProperty(db, "rocksdb.compaction-pending") == 0 &&
        IntProperty(db, "rocksdb.num-running-flushes") == 0 && IntProperty(db, "rocksdb.mem-table-flush-pending") == 0)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
#endif
}

// While the load goes on: flushes the memtables and waits until no flush or compaction runs or is
// pending, or until `deadline`; whether it finished. Where the window left writes stopped, RocksDB
// refuses a manual flush that does not wait (TryAgain) until they resume: the flush is asked again
// until it is taken, and the DB has not settled before it is.
bool Settle(rdb::DB* db, Clock::time_point deadline) {
  rdb::FlushOptions flush;
  flush.wait = false;
  bool asked = false;
  for (;;) {
    if (!asked) {
      rdb::Status s = db->Flush(flush);
      if (!s.IsTryAgain()) Check(s, "flush");
      asked = s.ok();
    }
    if (asked && IntProperty(db, "rocksdb.num-running-compactions") == 0 &&
        IntProperty(db, "rocksdb.compaction-pending") == 0 && IntProperty(db, "rocksdb.num-running-flushes") == 0 &&
        IntProperty(db, "rocksdb.mem-table-flush-pending") == 0)
      return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// db_bench's keys: the number big-endian in the first 8 bytes, '0' after.
void MakeKey(uint64_t n, int size, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * (7 - i))) & 0xff);
  std::memset(out + 8, '0', static_cast<size_t>(size - 8));
}

// db_bench's values: a pool of 100-byte pieces, each a random printable string of ratio * 100 bytes
// repeated; a value is the next `size` bytes of the pool.
class Values {
 public:
  Values(double ratio, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> printable(' ', ' ' + 94);
    const size_t raw_len = std::max<size_t>(1, static_cast<size_t>(100 * ratio));
    while (pool_.size() < (1 << 20)) {
      std::string raw(raw_len, ' ');
      for (char& c : raw) c = static_cast<char>(printable(rng));
      std::string piece;
      while (piece.size() < 100) piece += raw;
      pool_ += piece.substr(0, 100);
    }
  }
  rdb::Slice Next(size_t size) {
    if (pos_ + size > pool_.size()) pos_ = 0;
    rdb::Slice s(pool_.data() + pos_, size);
    pos_ += size;
    return s;
  }

 private:
  std::string pool_;
  size_t pos_ = 0;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

int Load(const Args& a) {
  auto stats = rdb::CreateDBStatistics();
  auto db = Open(a, stats);
  const uint64_t keys = a.data / static_cast<uint64_t>(a.key_size + a.value_size);
  Values values(a.compression_ratio, a.seed);
  rdb::WriteOptions wo;
  wo.disableWAL = db->GetDBOptions().recycle_log_file_num == 0;
  std::string key(static_cast<size_t>(a.key_size), '0');
  const auto started = Clock::now();
  for (uint64_t n = 0; n < keys; ++n) {
    MakeKey(n, a.key_size, &key[0]);
    Check(db->Put(wo, key, values.Next(static_cast<size_t>(a.value_size))), "put");
  }
  const double put_seconds = Seconds(Clock::now() - started);
  WaitForCompaction(db.get());
  // --age: random overwrites (as fast as they go) of that many bytes, then flush and compaction again, so
  // that the levels hold what a DB under random overwrites holds, not one sorted run in the last level
  const uint64_t aged = a.age / static_cast<uint64_t>(a.key_size + a.value_size);
  std::mt19937_64 rng(a.seed);
  std::uniform_int_distribution<uint64_t> pick(0, keys - 1);
  const auto aging = Clock::now();
  for (uint64_t n = 0; n < aged; ++n) {
    MakeKey(pick(rng), a.key_size, &key[0]);
    Check(db->Put(wo, key, values.Next(static_cast<size_t>(a.value_size))), "put");
  }
  if (aged) WaitForCompaction(db.get());
  const double age_seconds = Seconds(Clock::now() - aging);
  const double seconds = Seconds(Clock::now() - started);
  Check(db->Close(), "closing the DB");
  std::printf("{\"mode\": \"load\", \"keys\": %" PRIu64 ", \"aged_keys\": %" PRIu64 ", \"put_seconds\": %.3f, "
              "\"age_seconds\": %.3f, \"seconds\": %.3f, \"wal\": %s}\n", keys, aged, put_seconds, age_seconds, seconds,
              wo.disableWAL ? "false" : "true");
  return 0;
}

// How much a counter grew between two samples; 0 where the later one could not be read (a thread gone).
uint64_t Gain(uint64_t before, uint64_t after) { return after > before ? after - before : 0; }

// --slow_call_us: what a call's time is broken into. The write_ parts are RocksDB's disjoint breakdown of a
// Put (the WAL, the memtable, a write delay, switching memtables and scheduling flushes, the rest, and the
// wait for the other writers of its batch); the mutex, Get and io_ parts lie within them; cpu is the
// thread's CPU time, the rest of a call's time it was waiting (blocked, or runnable on no core).
struct Part {
  const char* name;
  uint64_t (*read)();  // ns so far on the calling thread
};
uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000 + static_cast<uint64_t>(ts.tv_nsec);
}
const Part kParts[] = {
    {"write_wal", [] { return rdb::get_perf_context()->write_wal_time; }},
    {"write_memtable", [] { return rdb::get_perf_context()->write_memtable_time; }},
    {"write_delay", [] { return rdb::get_perf_context()->write_delay_time; }},
    {"write_scheduling", [] { return rdb::get_perf_context()->write_scheduling_flushes_compactions_time; }},
    {"write_pre_and_post", [] { return rdb::get_perf_context()->write_pre_and_post_process_time; }},
    {"write_thread_wait", [] { return rdb::get_perf_context()->write_thread_wait_nanos; }},
    {"db_mutex_lock", [] { return rdb::get_perf_context()->db_mutex_lock_nanos; }},
    {"db_condition_wait", [] { return rdb::get_perf_context()->db_condition_wait_nanos; }},
    {"get_from_memtable", [] { return rdb::get_perf_context()->get_from_memtable_time; }},
    {"get_from_files", [] { return rdb::get_perf_context()->get_from_output_files_time; }},
    {"block_read", [] { return rdb::get_perf_context()->block_read_time; }},
    {"io_write", [] { return rdb::get_iostats_context()->write_nanos; }},
    {"io_read", [] { return rdb::get_iostats_context()->read_nanos; }},
    {"io_fsync", [] { return rdb::get_iostats_context()->fsync_nanos; }},
    {"io_range_sync", [] { return rdb::get_iostats_context()->range_sync_nanos; }},
    {"io_prepare_write", [] { return rdb::get_iostats_context()->prepare_write_nanos; }},
    {"io_allocate", [] { return rdb::get_iostats_context()->allocate_nanos; }},
    {"io_open", [] { return rdb::get_iostats_context()->open_nanos; }},
    {"cpu", ThreadCpuNs},
};
constexpr size_t kNParts = std::size(kParts);
using Parts = std::array<uint64_t, kNParts>;

Parts ReadParts() {
  Parts p{};
  for (size_t i = 0; i < kNParts; ++i) p[i] = kParts[i].read();
  return p;
}

// One second of the run, as one thread saw it: requests due in it and their latencies, and those
// completed in it.
struct Second {
  uint64_t completed = 0;
  LatencyHistogram latency{4};  // ~6 % buckets: a per-second tail, not the run's
  uint64_t service_max = 0;  // ns, the longest RocksDB call issued in this second (issued -> done)
  uint64_t woke_max = 0;  // ns, the latest wake-up in this second (due -> issued, after a sleep)
};

struct Worker {
  bool write = true;
  LatencyHistogram latency{7};  // ns, from due to done
  LatencyHistogram service{7};  // ns, from issued to done: RocksDB's own time, without the wait to be issued
  LatencyHistogram woke{7};  // ns, how late the thread woke for a request it slept until: the host's floor
  std::vector<Second> seconds;
  uint64_t due = 0, completed = 0, unfinished = 0, errors = 0;
  double late_at_end_s = 0;  // how far behind schedule the thread was when the window closed
  std::atomic<long> tid{0};  // the thread's id, for the sampler to read its scheduler statistics
  uint64_t slow_calls = 0, slow_ns = 0, slowest_ns = 0;  // --slow_call_us: the calls over it, their time
  Parts slow{}, slowest{};  // where it went: summed over them, and the slowest call's
  std::atomic<Clock::rep> in_call{0};  // --slow_call_us: when the call in flight was issued, 0 between calls
};

// The window's end, which the main thread may move earlier (when the settle finishes).
using End = std::atomic<Clock::rep>;
Clock::time_point EndOf(const End& end) { return Clock::time_point(Clock::duration(end.load())); }

void Run(Worker* w, rdb::DB* db, const Args& a, double rate, Clock::time_point start, const End* end_at,
         uint64_t keys, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> pick(0, keys - 1);
  std::exponential_distribution<double> gap_exp(rate);
  const double gap = 1.0 / rate;
  Values values(a.compression_ratio, seed);
  std::string key(static_cast<size_t>(a.key_size), '0'), got;
  rdb::WriteOptions wo;
  rdb::ReadOptions ro;
  const size_t n_seconds = static_cast<size_t>(std::ceil(Seconds(EndOf(*end_at) - start))) + 1;
  w->seconds.resize(n_seconds);
  w->tid.store(syscall(SYS_gettid));
  if (a.slow_call_ns) rdb::SetPerfLevel(rdb::PerfLevel::kEnableTime);
  Parts before{};
  // the first request of each thread falls at a random point of its first gap, so threads do not align
  double offset = a.poisson ? gap_exp(rng) : std::uniform_real_distribution<double>(0, gap)(rng);
  for (;;) {
    const auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(offset));
    const auto end = EndOf(*end_at);
    if (due >= end) break;
    auto now = Clock::now();
    if (now >= end) {  // the window closed with requests still due: each waited at least until now
      for (auto d = due; d < end;) {
        const uint64_t waited = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - d).count());
        w->latency.Record(waited);
        w->seconds[static_cast<size_t>(Seconds(d - start))].latency.Record(waited);
        ++w->due;
        ++w->unfinished;
        offset += a.poisson ? gap_exp(rng) : gap;
        d = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(offset));
      }
      w->late_at_end_s = Seconds(now - due);
      break;
    }
    const bool slept = now < due;
    if (slept) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(due.time_since_epoch()).count();
      timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
      if (due >= EndOf(*end_at)) break;  // the settle finished while this thread slept
    }
    MakeKey(pick(rng), a.key_size, &key[0]);
    const auto issued = Clock::now();
    Second& at = w->seconds[std::min(n_seconds - 1, static_cast<size_t>(Seconds(issued - start)))];
    if (slept) {
      const uint64_t late = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(issued - due).count());
      w->woke.Record(late);
      at.woke_max = std::max(at.woke_max, late);
    }
    if (a.slow_call_ns) before = ReadParts(), w->in_call.store(issued.time_since_epoch().count());
    rdb::Status s = w->write ? db->Put(wo, key, values.Next(static_cast<size_t>(a.value_size)))
                             : db->Get(ro, key, &got);
    const auto done = Clock::now();
    if (a.slow_call_ns) w->in_call.store(0);
    const uint64_t service = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(done - issued).count());
    if (a.slow_call_ns && service >= a.slow_call_ns) {  // where it went: what the parts gained over the call
      const Parts after = ReadParts();
      Parts spent{};
      for (size_t i = 0; i < kNParts; ++i) spent[i] = Gain(before[i], after[i]);
      for (size_t i = 0; i < kNParts; ++i) w->slow[i] += spent[i];
      ++w->slow_calls, w->slow_ns += service;
      if (service > w->slowest_ns) w->slowest_ns = service, w->slowest = spent;
    }
    if (!s.ok() && !s.IsNotFound()) {
      if (++w->errors == 1) std::fprintf(stderr, "open_loop: %s: %s\n", w->write ? "put" : "get", s.ToString().c_str());
    }
    const uint64_t latency = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(done - due).count());
    w->latency.Record(latency);
    w->service.Record(service);
    at.service_max = std::max(at.service_max, service);
    w->seconds[std::min(n_seconds - 1, static_cast<size_t>(Seconds(due - start)))].latency.Record(latency);
    w->seconds[std::min(n_seconds - 1, static_cast<size_t>(Seconds(done - start)))].completed++;
    ++w->due;
    ++w->completed;
    offset += a.poisson ? gap_exp(rng) : gap;
  }
}

// Once a second: the stall time so far, the LSM's state, what the background wrote so far, how long
// the request threads had waited for a CPU so far, and the host's CPU time so far (what a pause was).
struct Sample {
  uint64_t stall_micros, l0_files, pending_bytes, flush_bytes, compaction_bytes, compactions_running;
  uint64_t run_delay_ns;  // summed over the request threads: runnable, not running (/proc schedstat)
  uint64_t busy_ticks, steal_ticks;  // the host's, /proc/stat (USER_HZ)
};

// ns the thread waited on a run queue since it began (the second field of its schedstat), 0 if unknown.
uint64_t RunDelay(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  uint64_t on_cpu = 0, waited = 0;
  return tid && (in >> on_cpu >> waited) ? waited : 0;
}

// The host's CPU time busy (user, nice, system, irq, softirq) and stolen by the hypervisor, in USER_HZ.
std::pair<uint64_t, uint64_t> HostTicks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal)) return {0, 0};
  return {user + nice + system + irq + softirq, steal};
}

// A thread's kernel stack as /proc/self/task/TID/stack gives it, innermost first, each frame's function
// without its offsets and without the system call entry's two frames common to all; "(unreadable)" where
// the file cannot be read (it needs root), "(none)" where it is empty.
std::string KernelStack(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stack");
  if (!in) return "(unreadable)";
  std::string line, stack;
  while (std::getline(in, line)) {  // "[<0>] ext4_buffered_write_iter+0x64/0x140"
    const size_t from = line.find("] ");
    if (from == std::string::npos) continue;
    const std::string frame = line.substr(from + 2, line.find('+', from) - from - 2);
    if (frame == "do_syscall_64" || frame == "entry_SYSCALL_64_after_hwframe") continue;
    stack += (stack.empty() ? "" : " < ") + frame;
  }
  return stack.empty() ? "(none)" : stack;
}

// --slow_call_us: while `running`, each request thread's call in flight has its kernel stack sampled as
// it passes each whole multiple of `every` since it was issued (on the watcher's next wake-up, every
// quarter of `every`): a call of D has floor(D / every) samples, each standing for `every` of its time.
std::map<std::string, uint64_t> WatchSlowCalls(const std::vector<Worker>& workers, Clock::duration every,
                                               const std::atomic<bool>& running) {
  std::map<std::string, uint64_t> samples;
  // per thread: when the call watched was issued, and when its next sample is due
  std::vector<Clock::rep> call(workers.size(), 0), due(workers.size(), 0);
  const Clock::duration tick = std::max<Clock::duration>(every / 4, std::chrono::microseconds(100));
  while (running.load()) {
    std::this_thread::sleep_for(tick);
    const Clock::rep now = Clock::now().time_since_epoch().count();
    for (size_t i = 0; i < workers.size(); ++i) {
      const Clock::rep issued = workers[i].in_call.load();
      if (!issued) continue;
      if (call[i] != issued) call[i] = issued, due[i] = issued + every.count();  // a new call
      if (now < due[i]) continue;
      const std::string stack = KernelStack(workers[i].tid.load());
      if (workers[i].in_call.load() != issued) continue;  // the call ended while its stack was read
      ++samples[stack];
      due[i] += every.count();
    }
  }
  return samples;
}

void Print(const char* name, double value, bool* first) {
  std::printf("%s\"%s\": %.12g", *first ? "" : ", ", name, value);
  *first = false;
}

void PrintLatency(const std::string& prefix, const LatencyHistogram& h, bool* first) {
  const double us = 1e-3;
  Print((prefix + "p50_us").c_str(), h.Percentile(0.5) * us, first);
  Print((prefix + "p99_us").c_str(), h.Percentile(0.99) * us, first);
  Print((prefix + "p99.9_us").c_str(), h.Percentile(0.999) * us, first);
  Print((prefix + "p99.99_us").c_str(), h.Percentile(0.9999) * us, first);
  Print((prefix + "max_us").c_str(), h.Max() * us, first);
  Print((prefix + "mean_us").c_str(), h.Mean() * us, first);
}

// The thresholds (us) whose counts of slower requests each window reports: an SLO's share of requests
// over its bound, summed over windows, as a percentile cannot be.
constexpr uint64_t kOver[] = {1000, 2000, 5000, 10000, 20000, 50000, 100000, 1000000};

// --windows: for each length L, the run cut into consecutive L-second windows from its start (the settle
// included, a last partial window left out), each window's requests by due time: how its tail varies
// from window to window, and how many were slower than each of kOver. From the per-second histograms
// (~6 % buckets), so a window's percentile is coarser than the run's.

void PrintWindows(const std::vector<int>& lengths, const std::vector<Second>& seconds, size_t whole) {
  std::printf("{\"windows\": [");
  bool any = false;
  for (const int length : lengths) {
    const size_t l = static_cast<size_t>(length);
    for (size_t from = 0; from + l <= whole; from += l) {
      LatencyHistogram h{4};
      for (size_t s = from; s < from + l; ++s) h.Merge(seconds[s].latency);
      std::printf("%s{\"seconds\": %d, \"start\": %zu, \"due\": %" PRIu64 ", \"p99_us\": %.6g, \"p99.9_us\": %.6g"
                  ", \"p99.99_us\": %.6g, \"max_us\": %.6g, \"over_us\": {",
                  any ? ", " : "", length, from, h.Count(), h.Percentile(0.99) * 1e-3, h.Percentile(0.999) * 1e-3,
                  h.Percentile(0.9999) * 1e-3, h.Max() * 1e-3);
      for (size_t t = 0; t < std::size(kOver); ++t)
        std::printf("%s\"%" PRIu64 "\": %" PRIu64, t ? ", " : "", kOver[t], h.CountAbove(kOver[t] * 1000));
      std::printf("}}");
      any = true;
    }
  }
  std::printf("]}\n");
}

int RunAtRate(const Args& a) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // wake on time: the default 50 us slack would add to every sleep
  auto stats = rdb::CreateDBStatistics();
  auto db = Open(a, stats);
  const uint64_t keys = a.data / static_cast<uint64_t>(a.key_size + a.value_size);
  const uint64_t stall0 = stats->getTickerCount(rdb::STALL_MICROS);
  const uint64_t user0 = stats->getTickerCount(rdb::BYTES_WRITTEN);
  const uint64_t flushed0 = stats->getTickerCount(rdb::FLUSH_WRITE_BYTES);
  const uint64_t compacted0 = stats->getTickerCount(rdb::COMPACT_WRITE_BYTES);
  std::map<std::string, std::string> stalls0;
  db->GetMapProperty(rdb::DB::Properties::kCFStats, &stalls0);

  const size_t n_writers = a.rate > 0 ? static_cast<size_t>(a.threads) : 0;
  std::vector<Worker> workers(n_writers + (a.read_rate > 0 ? static_cast<size_t>(a.read_threads) : 0));
  for (size_t i = n_writers; i < workers.size(); ++i) workers[i].write = false;
  const auto start = Clock::now() + std::chrono::milliseconds(10);
  const auto window_end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.duration));
  const auto settle_end = window_end + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.settle));
  End end_at{settle_end.time_since_epoch().count()};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers.size(); ++i) {
    const double rate = workers[i].write ? a.rate / a.threads : a.read_rate / a.read_threads;
    threads.emplace_back(Run, &workers[i], db.get(), std::cref(a), rate, start, &end_at, keys, a.seed * 1000 + i);
  }
  std::vector<Sample> samples;
  std::atomic<bool> running{true};
  std::map<std::string, uint64_t> kernel_waits;
  std::thread watcher;
  if (a.slow_call_ns)
    watcher = std::thread([&] {
      kernel_waits = WatchSlowCalls(workers, std::chrono::nanoseconds(a.slow_call_ns), running);
    });
  std::thread sampler([&] {
    for (auto t = start; running.load(); t += std::chrono::seconds(1)) {  // samples[0]: as the window began
      std::this_thread::sleep_until(t);
      if (!running.load()) break;
      uint64_t run_delay = 0;
      for (const Worker& w : workers) run_delay += RunDelay(w.tid.load());
      const auto [busy, steal] = HostTicks();
      samples.push_back({stats->getTickerCount(rdb::STALL_MICROS) - stall0,
                         IntProperty(db.get(), "rocksdb.num-files-at-level0"),
                         IntProperty(db.get(), "rocksdb.estimate-pending-compaction-bytes"),
                         stats->getTickerCount(rdb::FLUSH_WRITE_BYTES), stats->getTickerCount(rdb::COMPACT_WRITE_BYTES),
                         IntProperty(db.get(), "rocksdb.num-running-compactions"), run_delay, busy, steal});
    }
  });
  std::this_thread::sleep_until(window_end);
  // The LSM as the window left it, before anything drains.
  const uint64_t l0_files = IntProperty(db.get(), "rocksdb.num-files-at-level0");
  const uint64_t pending = IntProperty(db.get(), "rocksdb.estimate-pending-compaction-bytes");
  double settle_s = 0;
  bool settled = false;
  if (a.settle > 0) {
    settled = Settle(db.get(), settle_end);
    const auto now = Clock::now();
    settle_s = Seconds(std::min(now, settle_end) - window_end);
    if (now < settle_end) end_at.store(now.time_since_epoch().count());
  }
  for (auto& t : threads) t.join();
  const double window = Seconds(EndOf(end_at) - start);
  running.store(false);
  sampler.join();
  if (watcher.joinable()) watcher.join();

  const uint64_t sst_bytes = IntProperty(db.get(), "rocksdb.live-sst-files-size");
  const uint64_t stall_micros = stats->getTickerCount(rdb::STALL_MICROS) - stall0;
  const uint64_t user = stats->getTickerCount(rdb::BYTES_WRITTEN) - user0;
  const uint64_t flushed = stats->getTickerCount(rdb::FLUSH_WRITE_BYTES) - flushed0;
  const uint64_t compacted = stats->getTickerCount(rdb::COMPACT_WRITE_BYTES) - compacted0;
  std::map<std::string, std::string> stalls1;
  db->GetMapProperty(rdb::DB::Properties::kCFStats, &stalls1);

  LatencyHistogram all, writes, reads, service, woke;
  uint64_t slow_calls = 0, slow_ns = 0, slowest_ns = 0;
  Parts slow{}, slowest{};
  uint64_t due = 0, completed = 0, unfinished = 0, errors = 0, write_due = 0, read_due = 0;
  double late = 0;
  const size_t n_seconds = workers.empty() ? 0 : workers[0].seconds.size();
  std::vector<Second> per_second(n_seconds);
  std::vector<uint64_t> due_per_second(n_seconds, 0);
  for (const Worker& w : workers) {
    all.Merge(w.latency);
    service.Merge(w.service);
    woke.Merge(w.woke);
    (w.write ? writes : reads).Merge(w.latency);
    due += w.due, completed += w.completed, unfinished += w.unfinished, errors += w.errors;
    (w.write ? write_due : read_due) += w.due;
    late = std::max(late, w.late_at_end_s);
    slow_calls += w.slow_calls, slow_ns += w.slow_ns;
    for (size_t i = 0; i < kNParts; ++i) slow[i] += w.slow[i];
    if (w.slowest_ns > slowest_ns) slowest_ns = w.slowest_ns, slowest = w.slowest;
    for (size_t s = 0; s < n_seconds; ++s) {
      per_second[s].completed += w.seconds[s].completed;
      per_second[s].latency.Merge(w.seconds[s].latency);
      per_second[s].service_max = std::max(per_second[s].service_max, w.seconds[s].service_max);
      per_second[s].woke_max = std::max(per_second[s].woke_max, w.seconds[s].woke_max);
    }
  }
  // the series: one entry per whole second of the window; what the background and the host did in it
  // from the samples at its start and end
  std::printf("{\"series\": [");
  const size_t whole = static_cast<size_t>(window);
  const double ms_per_tick = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  for (size_t s = 0; s < whole && s < n_seconds; ++s) {
    const Sample none{};
    const Sample& m = s + 1 < samples.size() ? samples[s + 1] : none;
    const Sample& p = s + 1 < samples.size() ? samples[s] : none;
    std::printf("%s{\"t\": %zu, \"due\": %" PRIu64 ", \"completed\": %" PRIu64
                ", \"p99_us\": %.6g, \"max_us\": %.6g, \"service_max_us\": %.6g, \"woke_max_us\": %.6g"
                ", \"stall_micros\": %" PRIu64 ", \"l0_files\": %" PRIu64 ", \"pending_compaction_bytes\": %" PRIu64
                ", \"flush_bytes\": %" PRIu64 ", \"compaction_bytes\": %" PRIu64 ", \"compactions_running\": %" PRIu64
                ", \"run_delay_ms\": %.6g, \"host_busy_ms\": %.6g, \"host_steal_ms\": %.6g}",
                s ? ", " : "", s + 1, per_second[s].latency.Count(), per_second[s].completed,
                per_second[s].latency.Percentile(0.99) * 1e-3, per_second[s].latency.Max() * 1e-3,
                per_second[s].service_max * 1e-3, per_second[s].woke_max * 1e-3, m.stall_micros, m.l0_files,
                m.pending_bytes, Gain(p.flush_bytes, m.flush_bytes), Gain(p.compaction_bytes, m.compaction_bytes),
                m.compactions_running, Gain(p.run_delay_ns, m.run_delay_ns) * 1e-6,
                Gain(p.busy_ticks, m.busy_ticks) * ms_per_tick, Gain(p.steal_ticks, m.steal_ticks) * ms_per_tick);
  }
  std::printf("], \"rocksdb_version\": \"%d.%d.%d\"}\n", ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH);
  if (!a.windows.empty()) PrintWindows(a.windows, per_second, std::min(whole, n_seconds));
  if (a.slow_call_ns) {
    std::printf("{\"kernel_waits\": [");
    bool any = false;
    for (const auto& [stack, n] : kernel_waits) {
      std::printf("%s{\"stack\": \"%s\", \"samples\": %" PRIu64 "}", any ? ", " : "", stack.c_str(), n);
      any = true;
    }
    std::printf("]}\n");
  }

  bool first = true;
  std::printf("{");
  Print("ops_per_sec", completed / window, &first);
  Print("offered_ops_per_sec", (a.rate + a.read_rate), &first);
  Print("due_ops", static_cast<double>(due), &first);
  Print("completed_ops", static_cast<double>(completed), &first);
  Print("unfinished_ops", static_cast<double>(unfinished), &first);
  Print("delivered", due ? static_cast<double>(completed) / due : 0.0, &first);
  Print("late_at_end_s", late, &first);
  Print("errors", static_cast<double>(errors), &first);
  Print("seconds", window, &first);
  if (a.settle > 0) {
    Print("settle_s", settle_s, &first);
    Print("settled", settled ? 1.0 : 0.0, &first);
  }
  PrintLatency("", all, &first);
  PrintLatency("service_", service, &first);
  PrintLatency("woke_", woke, &first);
  Print("woke_ops", static_cast<double>(woke.Count()), &first);
  if (a.rate > 0 && a.read_rate > 0) {
    PrintLatency("write_", writes, &first);
    PrintLatency("read_", reads, &first);
  }
  Print("write_ops", static_cast<double>(write_due), &first);
  Print("read_ops", static_cast<double>(read_due), &first);
  Print("stall_micros", static_cast<double>(stall_micros), &first);
  if (a.slow_call_ns) {  // where the slow calls' time went, and the slowest's
    Print("slow_calls", static_cast<double>(slow_calls), &first);
    Print("slow_calls_us", slow_ns * 1e-3, &first);
    Print("slowest_call_us", slowest_ns * 1e-3, &first);
    for (size_t i = 0; i < kNParts; ++i) {
      Print(("slow_calls." + std::string(kParts[i].name) + "_us").c_str(), slow[i] * 1e-3, &first);
      Print(("slowest_call." + std::string(kParts[i].name) + "_us").c_str(), slowest[i] * 1e-3, &first);
    }
  }
  for (const auto& [name, value] : stalls1) {  // RocksDB's count of stalls and stops by cause, this window's
    if (name.rfind("io_stalls.", 0) != 0) continue;
    const double before = stalls0.count(name) ? std::atof(stalls0[name].c_str()) : 0.0;
    Print(("stalls." + name.substr(10)).c_str(), std::atof(value.c_str()) - before, &first);
  }
  Print("l0_files", static_cast<double>(l0_files), &first);
  Print("pending_compaction_bytes", static_cast<double>(pending), &first);
  Print("sst_bytes", static_cast<double>(sst_bytes), &first);
  Print("user_bytes", static_cast<double>(user), &first);
  Print("flush_bytes", static_cast<double>(flushed), &first);
  Print("compaction_bytes", static_cast<double>(compacted), &first);
  Print("write_amp", user ? static_cast<double>(flushed + compacted) / user : 0.0, &first);
  std::printf("}\n");
  std::fflush(stdout);
  Check(db->Close(), "closing the DB");
  return errors ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  return a.mode == "load" ? Load(a) : RunAtRate(a);
}
