// What an application that opens a DB with RocksDB's default options gets: opens (creating) the DB at
// argv[1] with a default-constructed rocksdb::Options, writes one key and closes it, so that the DB's
// OPTIONS file and LOG record the library's defaults of the version it is linked with.
// Built beside each release db_bench by objectives/build/build_db_bench.sh (as library_defaults); read by
// objectives/defaults.py, which compares them with what db_bench runs when given no flag.
#include <cstdio>
#include <memory>

#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/version.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DB_DIR\n", argv[0]);
    return 2;
  }
  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
#if ROCKSDB_MAJOR >= 11  // DB::Open returns a std::unique_ptr from 11.0
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db;
  ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::DB::Open(options, argv[1], &db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::DB::Open(options, argv[1], &raw);
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db(raw);
#endif
  if (s.ok()) {
    s = db->Put(ROCKSDB_NAMESPACE::WriteOptions(), "key", "value");
  }
  if (s.ok()) {
    s = db->Close();
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
