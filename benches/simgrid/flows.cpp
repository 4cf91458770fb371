// Runs the send/recv operations of a GOAL schedule on SimGrid (s4u, CM02 max-min sharing with
// latency and bandwidth factors of 1), for benches/contention.py --simgrid.
//
//   flows PLATFORM.xml FILE.goal [--messages]
//
// Semantics, those of commodel's `maxmin` with every message eager (plogp.S: null):
// * an operation starts when every operation it `requires` has completed and every one it
//   `irequires` has started (time 0 without dependencies);
// * a send's message starts with the send (whether or not the receive is posted): route
//   latency first, then the bytes at the max-min rate; the send completes with the last byte;
// * a receive completes at the later of its start and its message's arrival; the k-th receive
//   of (source, destination, tag) takes the k-th such send.
// SimGrid simulates the messages (one-sided communications between the ranks' hosts, no
// actors); the program follows the dependencies in SimGrid's completion callback.
// Printed: `rank R FINISH` per rank, `makespan T` (seconds), and with --messages one line
// `message SRC DST TAG BYTES START END` per message (START: the send started; END: the
// receive completed), in the order of the receives in the file.
//
// Supported subset of GOAL (what `commodel schedule` writes): `num_ranks N`, `rank R {` ... `}`,
// `LABEL: send SIZE to R [tag T]`, `LABEL: recv SIZE from R [tag T]` (SIZE in bytes, optional `b`;
// tag 0 by default),
// `A requires B`, `A irequires B`, `//` comments. Anything else (calc, wildcards, cpu/nic) is
// rejected with the file and line.

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Op {
  bool send;
  bool posted = false;   // a receive that has started
  bool arrived = false;  // a receive whose message has arrived
  int32_t peer;
  int32_t tag;
  uint64_t bytes;
  uint32_t waiting = 0;  // unmet dependencies
  uint32_t first = 0;    // its dependents: edges[first .. first + count)
  uint32_t count = 0;
  // The matching operation (a send's receive, a receive's send): its rank and index.
  uint32_t match_rank = UINT32_MAX;
  uint32_t match_op = UINT32_MAX;
  double start = -1;
  double end = -1;
  sg4::CommPtr comm;  // a send's message while it is in flight
};

// A dependent of an operation: the dependent's index, and whether it waits for the
// operation's start (irequires) rather than its completion (requires).
struct Edge {
  uint32_t op;
  bool on_start;
};

struct Rank {
  std::vector<Op> ops;
  std::vector<Edge> edges;
};

std::vector<Rank> ranks;

[[noreturn]] void fail(const std::string& file, size_t line, const std::string& what) {
  std::fprintf(stderr, "flows: %s:%zu: %s\n", file.c_str(), line, what.c_str());
  std::exit(2);
}

uint64_t parse_size(const std::string& s, const std::string& file, size_t line) {
  std::string digits = s;
  if (!digits.empty() && (digits.back() == 'b' || digits.back() == 'B'))
    digits.pop_back();
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    fail(file, line, "unsupported size '" + s.substr(0, 40) + "' (bytes, optional 'b')");
  return std::stoull(digits);
}

int32_t parse_int(const std::string& s, const std::string& file, size_t line, const char* what) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
    fail(file, line, std::string("unsupported ") + what + " '" + s.substr(0, 40) + "'");
  return static_cast<int32_t>(std::stol(s));
}

void read_goal(const std::string& file) {
  std::ifstream in(file);
  if (!in)
    fail(file, 0, "cannot open");
  std::string text;
  size_t line = 0;
  int current = -1;
  std::unordered_map<std::string, uint32_t> labels;
  std::vector<std::pair<uint32_t, Edge>> deps;  // (operation, dependent)
  std::vector<std::pair<std::pair<std::string, std::string>, std::pair<bool, size_t>>> pending;
  while (std::getline(in, text)) {
    ++line;
    auto cut = text.find("//");
    if (cut != std::string::npos)
      text.resize(cut);
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string x; words >> x;)
      w.push_back(x);
    if (w.empty())
      continue;
    if (w[0] == "num_ranks" && w.size() == 2 && current < 0) {
      ranks.resize(parse_int(w[1], file, line, "rank count"));
    } else if (w[0] == "rank" && w.size() == 3 && w[2] == "{" && current < 0) {
      current = parse_int(w[1], file, line, "rank");
      if (current >= static_cast<int>(ranks.size()))
        fail(file, line, "rank " + w[1] + " out of range");
      labels.clear();
      pending.clear();
    } else if (w[0] == "}" && w.size() == 1 && current >= 0) {
      Rank& r = ranks[current];
      deps.clear();
      for (auto const& [names, how] : pending) {
        auto a = labels.find(names.first);
        auto b = labels.find(names.second);
        if (a == labels.end() || b == labels.end())
          fail(file, how.second, "unknown label");
        deps.push_back({b->second, Edge{a->second, how.first}});
        r.ops[a->second].waiting++;
      }
      std::stable_sort(deps.begin(), deps.end(), [](auto const& x, auto const& y) { return x.first < y.first; });
      r.edges.reserve(deps.size());
      for (auto const& [op, edge] : deps) {
        if (r.ops[op].count == 0)
          r.ops[op].first = static_cast<uint32_t>(r.edges.size());
        r.ops[op].count++;
        r.edges.push_back(edge);
      }
      current = -1;
    } else if (current >= 0 && w.size() == 3 && (w[1] == "requires" || w[1] == "irequires")) {
      pending.push_back({{w[0], w[2]}, {w[1] == "irequires", line}});
    } else if (current >= 0 && (w.size() == 5 || (w.size() == 7 && w[5] == "tag")) && w[0].size() > 1 &&
               w[0].back() == ':' && ((w[1] == "send" && w[3] == "to") || (w[1] == "recv" && w[3] == "from"))) {
      Rank& r = ranks[current];
      Op op{};
      op.send = w[1] == "send";
      op.bytes = parse_size(w[2], file, line);
      op.peer = parse_int(w[4], file, line, "peer (wildcards are not supported)");
      op.tag = w.size() == 7 ? parse_int(w[6], file, line, "tag (wildcards are not supported)") : 0;
      if (op.peer >= static_cast<int>(ranks.size()))
        fail(file, line, "peer " + w[4] + " out of range");
      if (!labels.emplace(w[0].substr(0, w[0].size() - 1), static_cast<uint32_t>(r.ops.size())).second)
        fail(file, line, "label defined twice");
      r.ops.push_back(op);
    } else {
      fail(file, line, "unsupported statement (only send, recv, requires and irequires)");
    }
  }
  if (current >= 0)
    fail(file, line, "rank block not closed");
}

// The simulation: SimGrid moves the messages (one-sided communications between the ranks'
// hosts, created when their sends start); the dependencies are followed here, in SimGrid's
// completion callback, which starts what a completed message releases at that instant.
std::vector<sg4::Host*> hosts;
// Messages completed earlier (SimGrid 3.32 must not free an activity while completing it).
std::vector<sg4::CommPtr> finished;

void start(uint32_t me, uint32_t i, double now);

void release(uint32_t me, uint32_t i, bool on_start, double now) {
  Rank& r = ranks[me];
  const Op& op = r.ops[i];
  for (uint32_t k = op.first; k < op.first + op.count; k++)
    if (r.edges[k].on_start == on_start && --r.ops[r.edges[k].op].waiting == 0)
      start(me, r.edges[k].op, now);
}

void complete(uint32_t me, uint32_t i, double now) {
  ranks[me].ops[i].end = now;
  release(me, i, false, now);
}

void start(uint32_t me, uint32_t i, double now) {
  Op& op = ranks[me].ops[i];
  op.start = now;
  if (op.send) {
    op.comm = sg4::Comm::sendto_init(hosts[me], hosts[op.peer]);
    op.comm->set_payload_size(op.bytes);
    op.comm->set_data(&op);
    op.comm->start();
  } else {
    op.posted = true;
  }
  release(me, i, true, now);
  if (!op.send && op.arrived)
    complete(me, i, now);
}

void arrived(const sg4::Activity& a) {
  finished.clear();
  auto* send = a.get_data<Op>();
  if (send == nullptr)
    return;
  double now = a.get_finish_time();
  finished.push_back(std::move(send->comm));
  if (send->match_rank == UINT32_MAX) {  // a send nobody receives
    send->end = now;
    return;
  }
  Op& recv = ranks[send->match_rank].ops[send->match_op];
  complete(recv.match_rank, recv.match_op, now);
  recv.arrived = true;
  if (recv.posted)
    complete(send->match_rank, send->match_op, now);
}

// The k-th receive of (source, destination, tag) takes the k-th such send.
void match() {
  // (src, dst, tag, rank of the operation, its index), in file order.
  using Msg = std::tuple<int32_t, int32_t, int32_t, uint32_t, uint32_t>;
  std::vector<Msg> sends;
  std::vector<Msg> recvs;
  for (uint32_t me = 0; me < ranks.size(); me++)
    for (uint32_t i = 0; i < ranks[me].ops.size(); i++) {
      const Op& op = ranks[me].ops[i];
      if (op.send)
        sends.emplace_back(static_cast<int32_t>(me), op.peer, op.tag, me, i);
      else
        recvs.emplace_back(op.peer, static_cast<int32_t>(me), op.tag, me, i);
    }
  auto triple = [](const Msg& a, const Msg& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  };
  std::stable_sort(sends.begin(), sends.end(), triple);
  std::stable_sort(recvs.begin(), recvs.end(), triple);
  size_t k = 0;
  for (const Msg& m : recvs) {
    while (k < sends.size() && triple(sends[k], m))
      k++;
    if (k == sends.size() || triple(m, sends[k])) {
      std::fprintf(stderr, "flows: rank %d: a receive from %d tag %d has no matching send\n", std::get<1>(m),
                   std::get<0>(m), std::get<2>(m));
      std::exit(2);
    }
    Op& send = ranks[std::get<3>(sends[k])].ops[std::get<4>(sends[k])];
    Op& recv = ranks[std::get<3>(m)].ops[std::get<4>(m)];
    send.match_rank = std::get<3>(m);
    send.match_op = std::get<4>(m);
    recv.match_rank = std::get<3>(sends[k]);
    recv.match_op = std::get<4>(sends[k]);
    k++;
  }
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  if (argc < 3 || argc > 4 || (argc == 4 && std::string(argv[3]) != "--messages")) {
    std::fprintf(stderr, "usage: %s PLATFORM.xml FILE.goal [--messages]\n", argv[0]);
    return 2;
  }
  // CM02 max-min sharing weighted by route latency (weight-S 0), factors of 1, no
  // cross-traffic (a flow loads only its own link directions), a TCP window bound far above
  // any link's bandwidth.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e18");
  e.load_platform(argv[1]);
  read_goal(argv[2]);
  // Rank i runs on host node-i.
  for (size_t me = 0; me < ranks.size(); me++) {
    hosts.push_back(sg4::Host::by_name_or_null("node-" + std::to_string(me)));
    if (hosts.back() == nullptr) {
      std::fprintf(stderr, "flows: %s has no host node-%zu for rank %zu\n", argv[1], me, me);
      return 2;
    }
  }
  match();
  sg4::Activity::on_completion_cb(arrived);
  for (uint32_t me = 0; me < ranks.size(); me++)
    for (uint32_t i = 0; i < ranks[me].ops.size(); i++)
      if (ranks[me].ops[i].waiting == 0 && ranks[me].ops[i].start < 0)
        start(me, i, 0.0);
  e.run();
  finished.clear();
  for (size_t me = 0; me < ranks.size(); me++)
    for (const Op& op : ranks[me].ops)
      if (op.end < 0) {
        std::fprintf(stderr, "flows: rank %zu: an operation never completes (dependency cycle)\n", me);
        return 2;
      }
  double makespan = 0;
  for (size_t me = 0; me < ranks.size(); me++) {
    double finish = 0;
    for (const Op& op : ranks[me].ops)
      finish = std::max(finish, op.end);
    makespan = std::max(makespan, finish);
    std::printf("rank %zu %.12e\n", me, finish);
  }
  std::printf("makespan %.12e\n", makespan);
  if (argc == 4)
    for (size_t me = 0; me < ranks.size(); me++)
      for (const Op& op : ranks[me].ops)
        if (!op.send)
          std::printf("message %d %zu %d %llu %.12e %.12e\n", op.peer, me, op.tag,
                      static_cast<unsigned long long>(op.bytes), ranks[op.match_rank].ops[op.match_op].start, op.end);
  return 0;
}
