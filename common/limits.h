/* limits.h - every limit in the project, in one place, with its reason.
 *
 * Untrusted input is everywhere (agent-written code, agent-written tool
 * calls, test output): every buffer that grows from it is capped by a
 * constant from this file. Each module owns one section; keep the reason
 * next to the value. Runtime options may lower these defaults, never
 * raise a hard cap (the HARD ones).
 */
#ifndef RL_LIMITS_H
#define RL_LIMITS_H

/* ---- common ---------------------------------------------------------- */

/* Default cap of a buf_t when the caller gives none: far above any honest
 * tool observation or test log, small enough that a runaway loop fails
 * fast instead of swapping. */
#define RL_BUF_DEFAULT_MAX (64u << 20)

/* Largest file fs_read_file will read: task files, trajectories lines and
 * source files are far smaller; checkpoints use their own reader. */
#define RL_FILE_MAX (256u << 20)

/* Longest message rl_logf formats (on the stack): a summary line or a
 * transcript line, whose quoted text the caller cuts to a few hundred
 * bytes; a longer message is cut at this length. */
#define RL_LOG_LINE_MAX 4096

/* Default cap on the length of a vec_t when the caller gives none: a
 * million elements is above every list a run builds from one input (test
 * cases of a log, tasks of the corpus, edits of a diff) and small enough
 * that a runaway producer fails fast. Callers that hold more (token
 * streams, training data) pass their own cap. */
#define RL_VEC_DEFAULT_MAX (1u << 20)

/* Entries fs_list_dir returns from one folder (a repository folder, a
 * folder of run records): tens in practice; the cap stops a folder full
 * of generated files from being read into memory. */
#define RL_DIR_ENTRIES_MAX 100000

/* ---- sandbox --------------------------------------------------------- */

/* Defaults of sb_limits (sandbox/sandbox.h). A test command (compile and
 * run a small project) finishes in seconds; these leave ample room for
 * honest work and bound a runaway one. */
#define SB_TIMEOUT_MS_DEFAULT 30000   /* wall clock of one command */
#define SB_CPU_MS_DEFAULT 60000       /* per process: 2 cores x wall */
#define SB_MEM_MB_DEFAULT 2048        /* RLIMIT_AS: gcc and python reserve far
                                         more address space than they touch */
#define SB_PROCS_DEFAULT 128          /* make -j, test runners, their threads */
#define SB_FSIZE_MB_DEFAULT 64        /* build outputs of a small repository */
#define SB_NOFILE_DEFAULT 512         /* compilers and test runners use < 100 */
#define SB_DISK_MB_DEFAULT 0          /* no bound on what a run adds to its work
                                         dir unless the caller sets one */
#define SB_OUT_MAX_DEFAULT (256u << 10)   /* captured output: head + tail
                                             kept, plenty for a test log */
#define SB_FLOOD_MAX_DEFAULT (16u << 20)  /* stop a command that writes more:
                                             no honest test log is this big */

/* Hard caps: options may lower them, never exceed them. */
#define SB_TIMEOUT_MS_HARD (3600 * 1000)  /* one hour */
#define SB_MEM_MB_HARD (64L << 10)        /* 64 GB of address space */
#define SB_PROCS_HARD 4096
#define SB_FSIZE_MB_HARD (16L << 10)
#define SB_DISK_MB_HARD (16L << 10)       /* the layer holding a run's writes is
                                             RAM (tmpfs) */
#define SB_NOFILE_HARD 65536
#define SB_OUT_MAX_HARD (64u << 20)       /* the captured text lives in memory */
#define SB_FLOOD_MAX_HARD (1u << 30)
#define SB_ARGV_MAX 4096                  /* argv entries */
#define SB_ENV_MAX 256                    /* extra environment entries */
#define SB_RW_PATHS_MAX 16                /* extra writable paths */
#define SB_RO_PATHS_MAX 16                /* read-only paths inside them: the
                                             protected test paths of a task */
#define SB_ARGS_BYTES_MAX (1u << 20)      /* argv + env strings; the kernel's
                                             ARG_MAX is 2 MB */
#define SB_STDIN_MAX (1u << 20)           /* stdin_data is written into the pipe
                                             before the command starts: it must
                                             fit in one pipe (pipe-max-size) */

/* Identity of the command. When the harness runs as root the command runs
 * as this host uid/gid (no account uses it, it owns no file), seen as
 * SB_NS_UID inside its user namespace. Not 65534: nobody owns files and
 * may use the ext4 reserved blocks here. */
#define SB_HOST_UID 100000
#define SB_NS_UID 1000

/* The private TMPDIR of a run is a tmpfs of this size (memory: it is
 * bounded like a file the command writes) and inode count. With a root of
 * its own per run, that root is one tmpfs of SB_TMPFS_MB + SB_SHM_MB
 * holding both /tmp and /dev/shm. */
#define SB_TMPFS_MB 256
#define SB_TMPFS_INODES 16384
/* The private /dev/shm: POSIX semaphores and small shared buffers. */
#define SB_SHM_MB 64

/* The root of a run (a root harness): top-level entries of the host's
 * root kept (bin, sbin, lib, lib32, lib64, libx32, usr), and the /etc
 * entries a build and a test run read, put once per process into a tmpfs:
 * a score of small files (copied; a larger one is left out) and links,
 * and directories (bound read-only). */
#define SB_ROOT_TOP_MAX 8
#define SB_ETC_FILE_MAX (1u << 20)
#define SB_ETC_MB 16

/* The memory cgroup of a run's tree allows mem_mb plus this: a single
 * process then meets its own RLIMIT_AS (a clean allocation failure)
 * before the tree's limit, where the kernel first reclaims (re-reading
 * program text: slow) and then OOM-kills. */
#define SB_CG_MEM_SLACK_MB 64

/* A run with a disk bound writes into a tmpfs layer over its work dir
 * (an overlay), carried back into the work dir after the run: at most
 * this many files (a build of a small repository makes hundreds), and the
 * carrying back walks at most this deep (deeper is refused: the work dir
 * keeps what was carried until there). */
#define SB_DISK_INODES 65536
#define SB_DISK_DEPTH_MAX 64

/* Cgroups of finished runs whose removal found them still busy, retried
 * at later reaps: about one per thread running sandboxes. */
#define SB_CG_PENDING_MAX 64
/* sb_release waits at most this long (ms) for busy cgroups to empty: they
 * do within a few ms of their tree's reaping; longer means a task of the
 * tree is stuck in the kernel and the next reap retries. */
#define SB_CG_FLUSH_MS 200

/* Fixed SOURCE_DATE_EPOCH (2020-01-01 UTC) so builds are reproducible. */
#define SB_SOURCE_DATE_EPOCH "1577836800"

/* After a timeout or a flood the init kills and reaps the whole tree, in
 * microseconds; only a stuck init waits this long before SIGKILL. */
#define SB_STOP_GRACE_MS 2000

/* Stack of the sandbox's init and of the command before it execs: they only
 * make system calls; ASan builds need the slack. */
#define SB_CHILD_STACK (256u << 10)
/* Stack of the probe's trial children (a mount or two, then exit). */
#define SB_TRIAL_STACK (64u << 10)

/* Caches of one process: child stacks kept for reuse, Landlock rulesets
 * (a GRPO group cycles through a few work dirs; the key holds the dirs'
 * paths), user namespaces for idmapped mounts (one per work-dir owner). */
#define SB_STACK_CACHE 8
#define SB_LL_CACHE 32
#define SB_LL_KEY 1024
#define SB_IDMAP_CACHE 16

/* Inits of finished runs kept until they have exited (they tear their
 * namespaces down after their report, while the harness goes on; the next
 * run of any thread reaps them): about one per thread running sandboxes.
 * Past this many the oldest is waited for. */
#define SB_RETIRED_MAX 64

/* Entries walked when the work dir must be chowned because the kernel
 * cannot idmap it: a repository work tree has hundreds, not this many. */
#define SB_CHOWN_MAX 200000

/* ---- workspace (harness/workspace) ----------------------------------- */

/* Longest repo name or base key. Both become file names (<key>-<slot>)
 * and ref names; instance ids are far shorter. */
#define RL_WS_NAME_MAX 128

/* Slots per base: one per concurrent episode of a GRPO group (a few
 * dozen) or of an environment server (ENVSRV_EPISODES_HARD); a bound
 * keeps a typo from making 10^9 directories. */
#define RL_WS_SLOT_MAX 4096

/* Largest patch ws_apply or a bug patch takes. An agent's edit or a bug is
 * a few KB; 8 MiB leaves room for generated files and stops a runaway
 * tool call from being parsed into memory. */
#define RL_WS_PATCH_MAX (8u << 20)

/* Largest diff ws_diff returns. It is stored in trajectory records; a diff
 * bigger than this is not a bug fix (past it ws_diff fails with
 * RL_ELIMIT instead of growing without bound). */
#define RL_WS_DIFF_MAX (8u << 20)

/* Files bigger than this are shown as binary without content in ws_diff
 * (libgit2's max_size), so a 1 GB data dump left by agent code is never
 * read into memory. Source files are far smaller. */
#define RL_WS_DIFF_FILE_MAX (1u << 20)

/* Base file contents a work tree keeps in memory so reset compares and
 * rewrites without the object store. Task repos are a few hundred KB;
 * past the cap the rest is read from the store when needed (slower, same
 * result). Per open work tree, so G slots hold G copies. */
#define RL_WS_BLOB_CACHE_MAX (32u << 20)

/* Directory depth the clean pass descends into an untracked tree before
 * it moves the rest up to the work tree root and continues in another
 * pass: bounds stack and fds against a nesting bomb (mkdir in a loop). */
#define RL_WS_CLEAN_DEPTH_MAX 64

/* Clean passes before reset gives up. Each pass removes at least
 * RL_WS_CLEAN_DEPTH_MAX levels of every chain, so this allows a nesting
 * of 64 * 4096 = 262144 levels, far past what the sandbox's inode and
 * file-size caps let agent code create. */
#define RL_WS_CLEAN_PASSES_MAX 4096

/* How long ws_open waits for a busy work-tree slot before failing: after
 * kill -9 of a batch, its sandboxed test commands (which inherited the
 * slot's lock) run to their end, a few seconds at most. */
#define RL_WS_SLOT_WAIT_MS 10000

/* Entries (files and folders) of a base tree a work tree lists: task
 * repositories have hundreds; a million is past any source repository a
 * task is cut from and bounds a forged tree's list. */
#define RL_WS_TREE_ENTRIES_MAX (1u << 20)

/* Largest base file (or link target) reset reads into memory to compare
 * with the work tree's copy: task sources are a few KiB; a base holding a
 * bigger file is not a task repository. As RL_FILE_MAX. */
#define RL_WS_COMPARE_MAX (256u << 20)

/* ---- tasks ----------------------------------------------------------- */

/* One hunk's old or new side: our diffs touch a few lines; a whole file
 * rewritten stays far below this. */
#define RL_PATCH_HUNK_MAX (4u << 20)
/* Files one parsed diff names, and hunks of one file: a bug fix touches a
 * few files with a few hunks each; the oracle turns every hunk into one
 * edit, so a diff past these is not a fix to replay. */
#define RL_PATCH_FILES_MAX 1024
#define RL_PATCH_HUNKS_MAX 10000
/* A task file holds two small diffs and a problem statement: 4 MiB is
 * far above any honest one and keeps a corrupt file from eating memory. */
#define RL_TASK_FILE_MAX (4u << 20)
/* instance_id: "<repo>-gen-<seed>-<n>" style ids stay well under this,
 * and they become file names (NAME_MAX is 255 with ".json"). */
#define RL_TASK_ID_MAX 128
/* repo: a folder name under repos/. */
#define RL_TASK_REPO_MAX 64
/* problem_statement: an issue text the agent reads in its prompt; 16 KiB
 * is a long issue and still a small part of the context window. */
#define RL_TASK_PROBLEM_MAX (16u << 10)
/* bug / patch: diffs of a small repository; generated ones are a few
 * lines, hand-written ones at most a few hundred. */
#define RL_TASK_DIFF_MAX (1u << 20)
/* test_cmd: one shell line. */
#define RL_TASK_CMD_MAX 4096
/* Paths (test_result_file, protected_paths entries, generator.file). */
#define RL_TASK_PATH_MAX 256
/* Test ids: pytest ids with long parameters stay below this. */
#define RL_TASK_TEST_ID_MAX 256
/* Entries of FAIL_TO_PASS + PASS_TO_PASS: our repositories have tens of
 * tests; a thousand leaves room for a real project. */
#define RL_TASK_TESTS_MAX 1000
/* Entries of protected_paths. */
#define RL_TASK_PATHS_MAX 64
/* timeout_s range: a test run of a small repo takes seconds; 10 minutes
 * is the most a single scoring run may block a worker. */
#define RL_TASK_TIMEOUT_MIN 1
#define RL_TASK_TIMEOUT_MAX 600
/* generator.mutation names are short words ("flip_cmp"). */
#define RL_TASK_NAME_MAX 64
/* Tasks in one set: the corpus holds about 300 generated and the
 * hand-written ones; 100k keeps a runaway generator from making `list`
 * quadratic in memory. */
#define RL_TASK_SET_MAX 100000
/* Entries of one tasks folder, listed and sorted before loading: at most
 * a set's worth of task files plus their READMEs and subfolders. */
#define RL_TASK_DIR_ENTRIES_MAX (2 * RL_TASK_SET_MAX)
/* Folder depth under tasks/generated/ (generated/<repo>/ is depth 1). */
#define RL_TASK_DIR_DEPTH 8
/* Terms in one selector ("a,b,repo:x,..."). */
#define RL_TASK_SELECT_TERMS_MAX 1024

/* ---- tasks: test-result parsers (tasks/testres) ----------------------- */

/* Test cases kept from one run. Our repositories have tens; output of a
 * misbehaving (agent-edited) test binary can claim millions. Cases past
 * the cap are dropped, so they read as TR_MISSING (a failure). */
#define RL_TR_CASES_MAX 20000
/* A test name longer than any valid task test id (RL_TASK_TEST_ID_MAX)
 * can never match one: keep a little more, cut the rest. */
#define RL_TR_NAME_MAX 512
/* Failure message kept per test: enough for an assertion and the tail of
 * a Python traceback; it goes into the agent's observation. */
#define RL_TR_MSG_MAX 4096
/* Element nesting in JUnit XML: pytest writes 4 levels. */
#define RL_TR_XML_DEPTH 64
/* Attributes on one XML element (pytest writes at most 6). */
#define RL_TR_XML_ATTRS_MAX 32
/* Longest XML element or attribute name. */
#define RL_TR_XML_NAME_MAX 128
/* The integrity finding of a report: one line naming a test (ids are at
 * most RL_TASK_TEST_ID_MAX) and what disagreed. */
#define RL_TR_INTEGRITY_MAX 512

/* ---- tasks: bug generator (tasks/mutate, tasks/diff) ------------------ */

/* Largest source file the mutator lexes: repository files are a few
 * hundred lines. */
#define RL_MUT_SRC_MAX (1u << 20)
/* Tokens (and functions) of one lexed source. Every token covers at least
 * one byte but Python's line ends, which each follow a token, so a source
 * of RL_MUT_SRC_MAX bytes has at most this many; they are int indexes. */
#define RL_MUT_TOKENS_MAX (RL_MUT_SRC_MAX + 1)
/* Candidate sites kept per file (a 400-line file has a few hundred). */
#define RL_MUT_SITES_MAX 50000
/* Bracket nesting the mutator tracks; deeper code is left unmutated. */
#define RL_MUT_DEPTH_MAX 256
/* Lines per side the diff writer accepts. */
#define RL_DIFF_LINES_MAX 200000
/* Edits Myers' search may need for the changed middle (after trimming the
 * common head and tail). Its trace costs about D^2 longs: 1024 edits is
 * 8 MiB, far above a mutation's one or two changed lines; past it the
 * writer emits one delete-all/insert-all run, still a correct diff. */
#define RL_DIFF_EDITS_MAX 1024

/* Candidate bugs the generator considers per repository: every site of a
 * 400-line library is a few hundred; the cap bounds a pathological file. */
#define RL_GEN_MAX_CANDIDATES 20000

/* Test runs per stage of `harness validate --runs N`: each is a build and
 * a test run (about 0.5 s for our repositories), so 20 is ten seconds per
 * stage and task, enough to see a bug that passes one run in five. */
#define RL_VALIDATE_RUNS_MAX 20
/* Leftover files named in validate's warning about missing ignore rules:
 * enough to see the pattern (build/, *.o, a result file), one line. */
#define RL_VALIDATE_LEFTOVERS_SHOWN 5

/* One generated task in this many (by id hash) is held out, in the
 * repositories that are not held out entirely: 20%. */
#define RL_GEN_HELDOUT_EVERY 5

/* A generated task's problem statement quotes what the base run reported
 * for its first RL_GEN_PROBLEM_TESTS failing tests, each message cut to
 * RL_GEN_PROBLEM_MSG_MAX bytes and RL_GEN_PROBLEM_MSG_LINES lines: enough
 * for an assertion's expected and actual values or a traceback's last
 * frames, while the statement stays far below RL_TASK_PROBLEM_MAX. */
#define RL_GEN_PROBLEM_TESTS 3
#define RL_GEN_PROBLEM_MSG_MAX 700
#define RL_GEN_PROBLEM_MSG_LINES 12

/* ---- SWE-bench import and export (harness/swebench.h) ----------------- */

/* One line of an instances JSONL: two diffs of at most RL_TASK_DIFF_MAX,
 * a problem statement and a few more fields; 8 MiB is four times that. */
#define RL_SWB_INSTANCE_LINE_MAX (8u << 20)
/* Files of one snapshot: Django, among SWE-bench's largest repositories,
 * has about 7,000; the cap bounds a corrupt or enormous tree. */
#define RL_SWB_SNAPSHOT_FILES_MAX 100000
/* One trajectory record line read by `harness export`: a record holds
 * every turn's context, as large as RL_GRPO_RECORD_MAX allows. */
#define RL_SWB_RECORD_LINE_MAX (256u << 20)
/* The predictions file held in memory before its atomic write: one patch
 * (at most RL_TASK_DIFF_MAX-sized in practice) per record, 1 GiB in all. */
#define RL_SWB_PREDICTIONS_MAX (1u << 30)

/* ---- openai policy (policy/openai.h) ----------------------------------- */

/* Requests a batch keeps open at once by default: a single inference
 * server batches eight concurrent requests without queueing them. */
#define OAI_INFLIGHT_DEFAULT 8
/* HTTP clients one openai policy keeps for calls from several threads at
 * once: one per call under way, at most max_inflight, itself at most
 * HTTP_MANY_INFLIGHT_MAX. */
#define OAI_CLIENTS_MAX HTTP_MANY_INFLIGHT_MAX
/* Servers of one openai policy (a comma-separated --base-url): a fleet of
 * generation servers one trainer drives; each costs a URL buffer. */
#define OAI_BASE_URLS_MAX 64
/* A chat reply written back in the harness's tool-call format: the reply
 * cap in tokens (RL_EP_REPLY_TOKENS) at a few bytes each, with room for
 * tool-call markup. */
#define RL_OAI_REPLY_MAX (1u << 20)

/* ---- http (http/http.h) ---------------------------------------------- */

/* Client. Connecting on loopback or a LAN takes milliseconds; a few
 * seconds cover a busy remote inference server. */
#define HTTP_CONNECT_TIMEOUT_MS_DEFAULT 5000
/* One attempt from connect to the last byte of the response: a model
 * server writing a few thousand tokens at 20 tokens/s needs minutes. */
#define HTTP_TIMEOUT_MS_DEFAULT 300000
#define HTTP_TIMEOUT_MS_HARD (3600 * 1000)   /* one hour */
/* A response body: a completion of 8k tokens with 20 top logprobs each
 * is about 8 MB of JSON. Past the cap the request fails, never truncates. */
#define HTTP_RESPONSE_MAX_DEFAULT (16u << 20)
#define HTTP_RESPONSE_MAX_HARD (256u << 20)   /* the body lives in memory */
/* Response headers kept for lookup (request ids, Retry-After): servers
 * send well under 4 KB; curl itself refuses one header over 100 KB. */
#define HTTP_RESPONSE_HEADERS_MAX (64u << 10)
/* Extra attempts after the first on 429, 5xx, refused or dropped
 * connections and timeouts: three ride out a server restart or a burst
 * of rate limiting without hiding a server that is down for good. */
#define HTTP_RETRIES_DEFAULT 3
#define HTTP_RETRIES_HARD 10
/* Wait before the first retry; it doubles with each further one, up to
 * the max. A Retry-After header lengthens a wait up to the max too. */
#define HTTP_BACKOFF_MS_DEFAULT 500
#define HTTP_BACKOFF_MAX_MS_DEFAULT 30000
#define HTTP_BACKOFF_MAX_MS_HARD 600000      /* ten minutes */
/* A URL: base URL plus path and a short query; browsers go to 8 KB. */
#define HTTP_URL_MAX 8192
/* Request headers a caller passes (authorization, content type, a few
 * vendor headers). */
#define HTTP_REQ_HEADERS_MAX 32
/* One header line a caller passes or a handler sets. */
#define HTTP_HEADER_LINE_MAX 8192

/* http_client_many: requests open at once. A model server batches
 * concurrent requests; 256 is past what one vLLM replica schedules at
 * once by default, and each open request holds a socket and its body. */
#define HTTP_MANY_INFLIGHT_MAX 256
/* Requests in one http_client_many call: one per active episode of a
 * rollout (RL_ROLLOUT_ACTIVE_MAX), with room to spare. */
#define HTTP_MANY_REQUESTS_MAX 4096

/* Server. A request body: a reset or step request is a few KB; a chat
 * request holding a 32k-token conversation and its tool schemas is well
 * under 1 MB. Past the cap the server answers 413 without calling the
 * handler. */
#define HTTP_SERVER_BODY_MAX_DEFAULT (8u << 20)
#define HTTP_SERVER_BODY_MAX_HARD (256u << 20)   /* held in memory */
/* A request body over the cap is read and dropped up to this many bytes
 * more, then answered 413: a client still sending when the connection
 * closes would see it reset, not the answer. A larger body declared by
 * its Content-Length is answered at once; one sent in chunks past this
 * closes the connection unanswered. */
#define HTTP_SERVER_DRAIN_MAX (1u << 20)
/* Connections open at once; each has its own thread, whose stack is
 * reserved address space, touched only as deep as a handler goes. */
#define HTTP_SERVER_CONNS_DEFAULT 128
#define HTTP_SERVER_CONNS_HARD 4096
/* A connection that sends nothing (between requests, or in the middle of
 * one) for this long is closed; a handler's own work does not count. */
#define HTTP_SERVER_IDLE_TIMEOUT_S_DEFAULT 30
#define HTTP_SERVER_IDLE_TIMEOUT_S_HARD 3600
/* Memory per connection for the request line and headers (libmicrohttpd
 * answers 431 past it); a bearer token and the usual headers are < 2 KB. */
#define HTTP_SERVER_CONN_MEMORY (64u << 10)
/* Connections the kernel queues before the server accepts them. */
#define HTTP_SERVER_BACKLOG 128
/* Extra headers a handler adds to one response (request id,
 * Retry-After, WWW-Authenticate). */
#define HTTP_SERVER_RESP_HEADERS_MAX 16
/* Bytes a streamed answer hands libmicrohttpd per call: a server-sent
 * event of one token with its logprobs is a few hundred bytes. */
#define HTTP_SERVER_STREAM_BLOCK (16u << 10)
/* A content type a handler sets. */
#define HTTP_CONTENT_TYPE_MAX 128

/* ---- harness: tools, template, episode ------------------------------- */

/* A result file (JUnit XML, Check's XML log) larger than this is not a
 * real report of a small repository (ours are a few KB; Check writes about
 * 300 bytes per test, so this is more than RL_TR_CASES_MAX tests): the run
 * is not trusted rather than parsed. */
#define RL_TESTRUN_RESULT_MAX (8u << 20)

/* The largest memory bound an episode config may ask for one test run's
 * process tree: far above what a test suite of the corpus needs (tens of
 * MB), below what a 2-core, 24 GB machine running several workers has. */
#define RL_TESTRUN_MEM_MB_MAX (16L << 10)

/* The test summary the agent sees: enough for every failing test of a
 * small repository with its message, before the observation budget. */
#define RL_TESTRUN_SUMMARY_MAX (256u << 10)

/* One failing test's message in the summary: an assertion with its
 * values fits; a dumped buffer is cut in the middle. */
#define RL_TESTRUN_MSG_MAX 600

/* Build/crash output shown when no test result was reported: the
 * compiler's first errors and the tail. */
#define RL_TESTRUN_OUTPUT_SHOWN 3000

/* Episodes one report reads: far above an experiment's few thousand; a
 * directory with more is not a run of this harness. */
#define RL_REPORT_MAX_EPISODES 1000000u

/* One JSONL file: records carry every turn's context and ids (~100 KB
 * each with history=drop); 1 GiB is ~10k such episodes. */
#define RL_REPORT_FILE_MAX (1024u << 20)

/* summary.md and each SVG. */
#define RL_REPORT_MD_MAX (16u << 20)
#define RL_REPORT_SVG_MAX (4u << 20)

/* Steps simulated for the utilization model: long enough for the
 * carry-over to reach its steady state. */
#define RL_REPORT_UTIL_STEPS 50

/* One worker's result line: written to a shared pipe in one write(2),
 * which is atomic below PIPE_BUF (4096 on Linux). */
#define RL_POOL_RESULT_MAX 3800

/* A batch's output file read back on resume: records of ~100 KB, so
 * about 20k episodes; a larger file belongs in several runs. */
#define RL_BATCH_OUT_MAX (2048u << 20)

/* Jobs of one batch: seeds x tasks of any sane experiment. */
#define RL_BATCH_MAX_JOBS 1000000u

/* Plain progress lines (not a terminal): one every so many seconds, so a
 * CI log shows life without drowning. */
#define RL_BATCH_PLAIN_EVERY_S 10.0

/* An experiment file is a few runs of a few fields. */
#define RL_EXP_FILE_MAX (1u << 20)

/* Seeds of one run: GRPO groups are 8-64; evaluation sets a few hundred. */
#define RL_EXP_MAX_SEEDS 4096

/* -- bug generation (harness/cmd_gen) -- */

/* Source files collected from a repository: task repositories have tens;
 * the cap stops a repository full of generated files from being read into
 * memory. */
#define RL_GEN_FILES_MAX 10000

/* Mutated sources remembered to drop duplicates: every candidate kept
 * (RL_GEN_MAX_CANDIDATES) and those whose diff could not be written (past
 * RL_TASK_DIFF_MAX), which are rare. */
#define RL_GEN_SEEN_MAX (2 * RL_GEN_MAX_CANDIDATES)

/* -- chat, template and tool-call parser (protocol/chat, protocol/template,
 *    protocol/toolcall) -- */

/* Messages of one conversation. An episode has at most RL_EP_HARD_TURNS
 * turns of an assistant message and up to RL_TC_CALLS_MAX tool results
 * (about 3600); a chat request to `grpo serve` renders every message with
 * markup of more than four tokens, so one with more messages than this
 * could not fit the longest context a model takes (RL_MODEL_SEQ_MAX). */
#define RL_CHAT_MSGS_MAX 16384

/* Largest assistant message the parser accepts (bytes of generated text).
 * A policy writing more in one turn is degenerate (a 32k-token turn is
 * ~128 KiB); 4 MiB leaves room for write_file of a large source file. */
#define RL_TC_TEXT_MAX (4u << 20)

/* Tool calls in one assistant message. Honest agents make 1-3 (read two
 * files, then edit); more is usually a loop the cap should cut early. */
#define RL_TC_CALLS_MAX 8

/* Parameters in one call: our widest tool has 3; 16 is generous and
 * keeps duplicate detection trivially cheap. */
#define RL_TC_PARAMS_MAX 16

/* Tool and parameter names: ours are under 20 bytes. */
#define RL_TC_NAME_MAX 64

/* Elements of an array-of-strings argument (run_tests `tests`): task
 * suites have tens of tests, not thousands. */
#define RL_TC_ARRAY_MAX 256

/* Bytes of the offending text quoted in a format-error observation: enough
 * to recognise it, short enough to keep the error one readable line. */
#define RL_TC_QUOTE_MAX 40

/* Largest rendered context (bytes). The longest contexts we train on are
 * 32k tokens (~128 KiB); 32 MiB only stops a runaway episode. */
#define RL_TPL_TEXT_MAX (32u << 20)

/* System prompt files (prompts/NAME.md): ours are under 2 KiB; a prompt
 * past 64 KiB would eat the context. */
#define RL_TPL_PROMPT_MAX (64u << 10)

/* -- file tools (harness/tools) -- */

/* Bytes of one path argument: far above any repository path, far below
 * PATH_MAX trouble. */
#define RL_TOOL_PATH_MAX 1024

/* Bytes read_file / edit_file / search read of one file. Task sources are
 * a few KiB; a file past 1 MiB is data, not code to fix, and reading more
 * would only be cut by the observation budget. */
#define RL_TOOL_READ_MAX (1u << 20)

/* Lines read_file shows from start_line when no end_line is given: a
 * function of the corpus fits in 40 lines, and the window saves a policy
 * the arithmetic of an end line (start + N), which the 4 M-parameter model
 * gets wrong; 40 numbered lines are about 500 tokens. */
#define RL_TOOL_READ_WINDOW 40

/* Bytes write_file / edit_file may write to one file: same reasoning. */
#define RL_TOOL_WRITE_MAX (1u << 20)

/* Entries list_files visits (files + directories) and prints. Task repos
 * have tens of files; a 20000-entry walk takes ~10 ms and stops a tree
 * full of build outputs from blowing the 5 s budget. */
#define RL_TOOL_LIST_VISIT_MAX 20000
#define RL_TOOL_LIST_SHOW_MAX 500

/* Directory depth walked by list_files and search: deeper trees are
 * generated junk or a symlink-free loop of nested directories. */
#define RL_TOOL_DEPTH_MAX 32

/* search: files opened, total bytes read, matches printed, and bytes of a
 * matching line shown. 64 MiB reads in well under a second from page
 * cache; 100 matches already exceed a useful observation. */
#define RL_TOOL_SEARCH_FILES_MAX 5000
#define RL_TOOL_SEARCH_BYTES_MAX (64u << 20)
#define RL_TOOL_SEARCH_MATCHES_MAX 100
#define RL_TOOL_SEARCH_LINE_MAX 200

/* Wall-clock budget of one file-tool call: a tool answers within 5 s.
 * Enforced by the caps above and a clock check between files. */
#define RL_TOOL_TIME_MS 5000

/* Default observation budget (bytes of tool output shown to the policy):
 * ~2k tokens, enough for a 200-line file, small enough that ten calls fit
 * an 32k-token context. */
#define RL_TOOL_OBS_BUDGET 8192

/* edit_file's answer to an old_string it cannot place: the most similar
 * lines of the file when there is no match, the matching lines when there
 * are several. The scan compares character pairs of one window of lines
 * per line of the file, linear in the file; files past 256 KiB (not code a
 * policy edits by hand) and old_strings past 4 KiB get no hint. Eight
 * lines of occurrences are enough to see that more context is needed. */
#define RL_TOOL_HINT_FILE_MAX (256u << 10)
#define RL_TOOL_HINT_OLD_MAX 4096
#define RL_TOOL_HINT_SHOW_MAX 8

/* Windows of the file edit_file shows for an old_string it cannot find:
 * a short one ("x > lo") is about as similar to several lines, and three
 * candidates cost ~60 tokens. */
#define RL_TOOL_HINT_WINDOWS 3

/* A file whose first bytes hold a NUL is binary: not shown or searched. */
#define RL_TOOL_BINARY_PROBE 8192

/* Default turn limit of an episode: the reference pool's tasks take 4-20
 * turns; 50 leaves room to recover without letting a loop run forever. */
#define RL_EP_DEFAULT_TURNS 50

/* Turns even an "unlimited" episode stops at: a guard against a policy
 * that never submits (the wall-clock limit is the other). */
#define RL_EP_HARD_TURNS 400

/* Default wall-clock limit of one episode (seconds). */
#define RL_EP_DEFAULT_WALL_S 600

/* Tokens of one assistant reply: a think block, a short explanation and a
 * tool call whose edit carries a function body. */
#define RL_EP_REPLY_TOKENS 1024

/* Bytes of one tool observation (head + tail kept): ~2.5k tokens, room for
 * a whole 200-line source file; longer output keeps its head and tail. */
#define RL_EP_OBS_BUDGET 8000

/* Wall-clock budget of one file tool call (ms): the reference's 3-5 s. */
#define RL_EP_FILE_TOOL_MS 5000

/* "name arguments" of the previous call, compared to flag repeats. */
#define RL_EP_CALL_KEY_MAX 8192

/* Segments of one rendered context an episode notes the ids of: the
 * template's segments are non-empty, so a context within RL_TPL_TEXT_MAX
 * bytes has at most that many. */
#define RL_EP_SEGS_MAX RL_TPL_TEXT_MAX

/* Ids of one turn's context: as many as a record's context may hold when
 * read back (RL_REC_IDS_MAX), so every record an episode writes reads
 * back. */
#define RL_EP_IDS_MAX RL_REC_IDS_MAX

/* A context rebuilt from a record's prefix references (harness/record,
 * read by `harness show`, the trainers): twice the template's cap on a
 * rendered context (RL_TPL_TEXT_MAX), so every record the harness writes
 * reads back, and a forged chain of references stops here. */
#define RL_REC_TEXT_MAX (64u << 20)
/* Context ids rebuilt by the same walk: every token covers at least one
 * byte of its context, so never more ids than context bytes. */
#define RL_REC_IDS_MAX RL_REC_TEXT_MAX
/* Segments of a context rebuilt by the same walk: the template's segments
 * are non-empty, so never more segments than context bytes. */
#define RL_REC_SEGS_MAX RL_REC_TEXT_MAX

/* Lines of each tool response (and of the system prompt) that `harness
 * show --transcript` prints before "[... N more lines]": a test run's
 * failures or a short function fit; --full prints everything. */
#define RL_SHOW_TOOL_LINES 20

/* Episodes a rollout steps at once by default: a GRPO step of 8 tasks x
 * G 8; each holds a work tree and, with the model, a KV cache. */
#define RL_ROLLOUT_ACTIVE 64
#define RL_ROLLOUT_ACTIVE_MAX 512

/* Threads running tool calls of a rollout step (tests in the sandbox). */
#define RL_ROLLOUT_THREADS_MAX 32
/* The longest a step of remote episodes waits for one to finish before
 * it returns with none: the caller (the asynchronous rollout thread)
 * checks between steps whether the run is closing. A fifth of a second
 * is short next to a turn and costs nothing while waiting. */
#define RL_ROLLOUT_REMOTE_WAIT_MS 200
/* Env servers one rollout spreads its remote episodes over, and the
 * length of an episode id they hand out (harness serve's ids are
 * SERVER-BOOT-N, under ENVSRV_ID_MAX). */
#define RL_ROLLOUT_ENV_URLS_MAX 64
#define RL_ROLLOUT_REMOTE_ID_MAX 128

/* -- integrity check of a scored diff (harness/integrity) -- */

/* Findings kept per scan: one is enough to flag an episode; a few dozen
 * show what a policy tried without letting a diff of 10^5 offending lines
 * grow the record. The rest are only counted. */
#define INTEG_FINDINGS_MAX 64

/* Bytes of the offending line kept in a finding: a line of code; a
 * minified line is cut. */
#define INTEG_TEXT_MAX 160

/* Largest tree file read to lex a changed source file whole (comments and
 * strings that begin before a hunk): task sources are a few KiB; past this
 * the hunks are lexed alone. */
#define INTEG_FILE_MAX (4u << 20)

/* Bytes looked at past a function name for the '{' of a definition
 * (parameters, attributes), and before it for an __attribute__: a
 * declaration spans a few lines. */
#define INTEG_DEF_LOOKAHEAD 2048

/* Entries and folder depth the tree scan visits (special files, links).
 * A task work tree with its build outputs has hundreds of entries; a tree
 * past either cap is itself a finding (special_file), so nothing can hide
 * behind it. */
#define INTEG_TREE_ENTRIES_MAX 200000
#define INTEG_TREE_DEPTH_MAX 64

/* Hunks and added lines of one file of a scanned diff: each takes at least
 * one byte of the patch, which integ_scan takes up to RL_WS_DIFF_MAX bytes,
 * so the cap bounds the lists without cutting a patch that is scanned. */
#define INTEG_DIFF_LINES_MAX RL_WS_DIFF_MAX

/* System include folders shadow_header looks in: the compiler's defaults
 * are about six (a few more with several gcc versions installed); a
 * caller's list of more is a mistake. */
#define INTEG_SYSDIRS_MAX 64

/* ---- harness: environment server (harness/envsrv.h) ------------------ */

/* Episodes open at once by default: one trainer's rollout batch (the
 * reference ran 64 workers). Each holds a work tree (a few hundred KB
 * on the corpus's repositories) and its conversation in memory. */
#define ENVSRV_EPISODES_DEFAULT 64
/* The most a server may be told to hold: each open episode is one work
 * tree slot (RL_WS_SLOT_MAX) and ~175 KB of memory and disk on the
 * corpus's repositories (1,000 open: 81 MB of server memory, 102 MB of
 * trees); far larger repositories and CPU for their test runs, not
 * memory, are what bound it: spread more over servers. */
#define ENVSRV_EPISODES_HARD 4096

/* A request body: one assistant message is at most a few thousand tokens
 * (RL_EP_REPLY_TOKENS), a few tens of KB; 1 MB leaves room for a long
 * write_file and refuses anything that is not one message. */
#define ENVSRV_BODY_MAX (1u << 20)

/* An episode no request touched this long is closed and recorded: a
 * client that died must not hold its work tree for ever, while a
 * trainer's slowest generation (minutes on a CPU model) stays open. */
#define ENVSRV_IDLE_S_DEFAULT 600
#define ENVSRV_IDLE_S_HARD 86400

/* Test runs (run_tests calls and scoring) in the sandbox at once; more
 * wait in a queue. 0: the online CPUs (a test run is CPU-bound). */
#define ENVSRV_TEST_RUNS_HARD 256

/* Step latencies kept for the /metrics percentiles: the last few
 * thousand steps, a few seconds to minutes of a busy server. */
#define ENVSRV_LATENCY_WINDOW 4096

/* An episode id: server id (ENVSRV_SERVER_ID_MAX), a boot stamp and a
 * sequence number. */
#define ENVSRV_SERVER_ID_MAX 32
#define ENVSRV_ID_MAX 64

/* One line of the records file scanned at restart for the episodes it
 * already holds (a record is ~100 KB; RL_REPORT_FILE_MAX bounds the file). */
#define ENVSRV_RECORD_LINE_MAX (64u << 20)

/* The bearer token: long enough for any generated secret. */
#define ENVSRV_TOKEN_MAX 512
/* Sampled token ids one /v1/step may carry (its "token_ids"): a reply is
 * at most the model's window; the body cap (ENVSRV_BODY_MAX) binds first. */
#define ENVSRV_STEP_TOKENS_MAX RL_MODEL_SEQ_MAX

/* Finished episodes whose record GET /v1/state still answers (read back
 * from the records file: an id and an offset each, ~90 bytes): a
 * trainer fetches the final state right after the episode ends, and
 * 4096 is many minutes of a busy server. */
#define ENVSRV_FINISHED_KEEP 4096

/* One open episode's journal file (its record so far, rewritten after
 * every step so a restart records its turns): a long episode's record is
 * a few hundred KB to a few MB; past the cap the file keeps the last
 * snapshot that fit. */
#define ENVSRV_STATE_MAX (8u << 20)

/* Base-content cache of all work trees together (ws_opts.cache_max is
 * this over --max-episodes, at most RL_WS_BLOB_CACHE_MAX per tree): 1,000
 * open episodes of a large repository must not each keep 32 MB; a tree
 * past its share reads the rest from the object store at reset. */
#define ENVSRV_BLOB_CACHE_TOTAL ((size_t)1 << 30)

/* Open files per episode a server needs: the slot's lock, the tools'
 * directory handle, up to two connections and room for libgit2's pack
 * files; `harness serve` raises its soft limit to fit --max-episodes. */
#define ENVSRV_FDS_PER_EPISODE 6

/* ---- policy / model --------------------------------------------------- */

/* The largest request seed (pol_request.seed): 53 bits, so that the seed
 * survives every JSON parser an OpenAI-compatible server may use (a
 * double holds it exactly; cJSON and JavaScript read numbers as doubles)
 * and sits inside the signed 64-bit range vLLM and SGLang accept. */
#define POL_SEED_MAX ((1ULL << 53) - 1)

/* A trajectory file replayed by `replay:FILE`: same bound as a batch. */
#define RL_REPLAY_FILE_MAX (2048u << 20)

/* Steps the oracle plans from a gold patch: a read per file and an edit
 * per hunk, plus four. A task's fix has a few; an episode stops after
 * RL_EP_HARD_TURNS turns anyway, so a longer plan could never be replayed. */
#define RL_ORACLE_STEPS_MAX 4096

/* -- search policy (policy/search*) -- */

/* A function or variable name the search policy remembers: C and Python
 * identifiers in the task repositories are under 40 bytes; longer ones
 * are cut, which only costs the policy a candidate. */
#define SR_NAME_MAX 64

/* Turns after which search submits whatever it has: under the default
 * episode limit (RL_EP_DEFAULT_TURNS, 50) so that it ends by its own
 * submit, and the bound of an "unlimited" episode (the brief: ~60). */
#define RL_SEARCH_TURNS_MAX 48

/* Candidate repairs tried (one edit + test run each) before giving up.
 * Investigation takes 5-10 turns; the rest of the turn budget goes to
 * candidates. */
#define RL_SEARCH_TRIES_MAX 38

/* Candidates remembered as tried (looked up linearly): a turn tries at
 * most two (the best partial again, then a new one) and search submits by
 * RL_SEARCH_TURNS_MAX, so an episode stays far below this. */
#define RL_SEARCH_TRIED_MAX 1024

/* Candidates kept per ranking: a 400-line file has a few hundred mutation
 * sites; the budget above tries only the best few dozen. */
#define RL_SEARCH_CANDS_MAX 4000

/* Files tracked per episode: task repositories have under 20. */
#define RL_SEARCH_FILES_MAX 32

/* Failing tests followed (searched and read); the rest only count. A
 * failure in many tests is usually one defect seen many times. */
#define RL_SEARCH_TESTS_MAX 8

/* Failing tests recorded from one run: task suites have tens. */
#define RL_SEARCH_FAILS_MAX 256

/* Names tracked (called by tests, by implicated functions): a few dozen
 * in practice. */
#define RL_SEARCH_NAMES_MAX 256

/* Search calls for names in one episode: the functions the tests call
 * and their helpers are a dozen; more is searching blindly. */
#define RL_SEARCH_NAME_SEARCHES_MAX 18

/* Search calls in one message: below the parser's RL_TC_CALLS_MAX (8),
 * leaving room for a revert in front. */
#define RL_SEARCH_CALLS_PER_TURN 6

/* Lines read from a test's first line: a test body is 5-40 lines. */
#define RL_SEARCH_TEST_LINES 60

/* Lines added around a change so that old_string is unique in the file,
 * each side; past it the candidate is dropped. */
#define RL_SEARCH_CONTEXT_LINES 8

/* Bytes of one edit block: the reply holds it twice (edit and revert)
 * and must stay well inside a reply's token budget (RL_EP_REPLY_TOKENS). */
#define RL_SEARCH_BLOCK_MAX 1200

/* Bytes of one failure message kept (hint words come from it); the
 * summary already cuts each at RL_TESTRUN_MSG_MAX. */
#define RL_SEARCH_MSG_MAX 4096

/* Bytes of an observation the parsers look at: the observation budget is
 * 8 KB; anything far longer is not one of ours. */
#define RL_SEARCH_OBS_MAX (1u << 20)

/* Lines of a file tracked: read_file shows up to RL_TOOL_READ_MAX bytes,
 * source files have a few hundred lines. */
#define RL_SEARCH_FILE_LINES_MAX 20000

/* Tokens scanned per file and definitions kept. */
#define RL_SEARCH_TOKENS_MAX 200000
#define RL_SEARCH_DEFS_MAX 2000
/* Comparisons collected over the files read (the consistency signal). */
#define RL_SEARCH_CMPS_MAX 20000

/* Search hits parsed from one observation (the tool shows at most 100). */
#define RL_SEARCH_HITS_MAX 200

/* Kept edits stacked (a look-again task needs two); attempts on top of
 * the innermost kept edit before it is undone as a wrong turn (an edit
 * that silences one failing test by disabling a branch, say). */
#define RL_SEARCH_KEEP_MAX 4
#define RL_SEARCH_BACKTRACK_TRIES 12

/* Attempts made after a partial improvement before building on the best
 * one seen: a full fix ranked just below a partial one is not missed. */
#define RL_SEARCH_LOOKAHEAD 4

/* Score points of the seed's Gumbel noise per unit of temperature: at the
 * default 0.7 a candidate one point behind another goes first about one
 * time in five, two points behind one time in twenty: a group of seeds
 * explores near the top of the ranking, not its tail. */
#define RL_SEARCH_NOISE_SCALE 1.0

/* Lines remembered where an attempt flipped a failing test to passing. */
#define RL_SEARCH_HOT_MAX 32

/* Levels followed from the failing test: 0 called by the test, 1 called
 * by those (searched in other files), 2 and 3 only within files read. */
#define RL_SEARCH_LEVEL_MAX 3
/* -- tokenizer (protocol/tokenizer) -- */

/* Longest pre-token piece in bytes; longer runs (minified code, base64,
 * 10k spaces) are cut into pieces of this size. Bounds the per-piece BPE
 * work (quadratic in the piece length) and the byte length of any token,
 * which a loaded file is checked against. Real words and indents are far
 * shorter. */
#define RL_TOK_PIECE_MAX 256

/* Longest pre-token piece of a Hugging Face tokenizer (and longest token
 * of its vocabulary). Its reference cuts no pieces; this cap only bounds
 * the quadratic BPE work of one piece (8 KB: ~30 M steps, tens of ms), far
 * above any word, number or whitespace run of real text, which therefore
 * encode exactly as the reference does. */
#define RL_TOK_HF_PIECE_MAX 8192

/* HARD cap on the vocabulary of a loaded tokenizer file: the model uses
 * 4-8k, the largest public BPE vocabularies are ~200k. */
#define RL_TOK_VOCAB_MAX (1 << 18)

/* Bytes of all token texts of a tokenizer: every id is at most
 * RL_TOK_PIECE_MAX bytes (a merge is checked against it, a special token
 * is shorter), so a full vocabulary fits; ids address them with 32 bits. */
#define RL_TOK_BYTES_MAX ((unsigned)RL_TOK_VOCAB_MAX * RL_TOK_PIECE_MAX)

/* Special tokens: how many, and how long each may be (they are short
 * markers like <|im_end|>; ASCII, no whitespace). */
#define RL_TOK_SPECIAL_MAX 256
#define RL_TOK_SPECIAL_LEN_MAX 64

/* Largest tokenizer JSON file: 2^18 merges at ~16 bytes each is 4 MB; a
 * Hugging Face tokenizer.json holds its vocabulary too (Qwen3: 11 MB). */
#define RL_TOK_FILE_MAX (16u << 20)

/* Largest text one tok_encode / tok_decode call handles: the same as any
 * capped buffer, far above one episode's transcript. */
#define RL_TOK_TEXT_MAX RL_BUF_DEFAULT_MAX

/* Encode cache of piece -> ids: pieces up to this many bytes are cached
 * (longer ones are rare and unique), the cache holds at most this many
 * bytes of keys+ids and is emptied when full. 4 MB covers every distinct
 * word of a few MB of code. */
#define RL_TOK_CACHE_PIECE_MAX 64
#define RL_TOK_CACHE_BYTES (4u << 20)

/* Training input: total bytes the trainer accepts (a few MB is the real
 * use; the trainer needs ~20x the unique-word bytes in memory), and the
 * largest single file `grpo tokenizer` reads while walking the trees
 * (bigger files are data dumps, not code or prose). */
#define RL_TOK_TRAIN_BYTES_MAX (64u << 20)
#define RL_TOK_TRAIN_FILE_MAX (4u << 20)
/* Entries of each of the trainer's tables (pairs, the words a pair occurs
 * in, the pairs one merge touches, the merge heap). Each byte of the
 * distinct pieces starts at most one pair and, when merged away, changes
 * at most five, so RL_TOK_TRAIN_BYTES_MAX of text makes at most six
 * entries per byte: this cap is never reached by accepted input and keeps
 * the 32-bit indexes of the tables in range. */
#define RL_TOK_TRAIN_ENTRIES_MAX (8u * RL_TOK_TRAIN_BYTES_MAX)
/* Directory depth `grpo tokenizer` walks: source trees are under 10
 * levels; deeper ones are symlink loops or generated data. */
#define RL_TOK_WALK_DEPTH_MAX 32
/* Entries of one directory `grpo tokenizer` lists and sorts: source
 * folders hold hundreds; a larger one is generated data. */
#define RL_TOK_WALK_DIR_ENTRIES_MAX (1u << 16)
/* Largest model dimensions a checkpoint or config may ask for. They bound
 * the allocations a (possibly corrupt) checkpoint header can trigger: the
 * built-in policy is a few million parameters; imported Hugging Face
 * checkpoints go up to 2 G parameters (Qwen2.5-1.5B, 8 GB in fp32: it
 * serves on a 24 GB machine; training needs 4 copies, so models of 0.6 B
 * and below train here). */
#define RL_MODEL_PARAMS_MAX (2048u << 20)
#define RL_MODEL_VOCAB_MAX (1 << 18)   /* BPE vocabularies here are 4-32 k */
#define RL_MODEL_DIM_MAX 8192          /* d_model and d_ff */
#define RL_MODEL_LAYERS_MAX 256
#define RL_MODEL_HEADS_MAX 256
/* Longest context: episodes are capped far below this; attention memory
 * grows linearly (scores are recomputed, never stored as T x T). */
#define RL_MODEL_SEQ_MAX 65536
/* Tokens in one training forward (B*T): the default model keeps about
 * 130 KB of activations per token (6 layers of ~19 KB, plus the logits
 * row), so 65536 tokens is ~8.5 GB -- a third of the machine. Training
 * uses B*T = 4096 (~0.6 GB); T 4096 x B 4 is ~2.2 GB. */
#define RL_MODEL_BATCH_TOKENS_MAX (1 << 16)
/* Sequences decoded together by model_sample: each holds a KV cache. */
#define RL_MODEL_SAMPLE_BATCH_MAX 256
/* Prefix caches a model policy keeps across turns (model_kvset): one per
 * episode in flight, with room for the rollout's 16 active episodes and
 * the ones that just ended. Each is a full window (~17 MB for a 4-layer
 * d256 model at 4096 tokens), allocated on first use. */
#define RL_MODEL_KV_CACHES 24
/* Removed sequences' caches model_dec keeps for prefix reuse: a server
 * with 32 conversations in flight keeps each one's last turn; the bytes
 * are capped by the caller (SERVE_PREFIX_CACHE_MB_DEFAULT), this only
 * bounds the linear search of each lookup. */
#define RL_MODEL_DEC_PREFIX_ENTRIES 64
/* Shortest computed prefix worth keeping: below it a prefill costs less
 * than the copy and the pool slot. */
#define RL_MODEL_DEC_PREFIX_MIN 16
/* Alternatives kept per sampled token (model_dec_top): OpenAI's API
 * allows top_logprobs 0..20. */
#define RL_MODEL_TOP_LOGPROBS_MAX 20
/* Stop token ids per sampling call. */
#define RL_MODEL_STOP_IDS_MAX 64
/* Worker threads of the model's pool (the machines have 2 cores). */
#define RL_MODEL_THREADS_MAX 64
/* safetensors header JSON: the default model's header is ~10 KB; a
 * corrupt length field must not make the loader allocate gigabytes. */
#define RL_MODEL_CKPT_HEADER_MAX (16u << 20)
/* Tensors listed in one checkpoint header (11 per layer + 2). */
#define RL_MODEL_CKPT_TENSORS_MAX 4096
/* Metadata strings (paths, hashes, config values) in a checkpoint. */
#define RL_MODEL_CKPT_META_STR_MAX 1024
/* config.json and model.safetensors.index.json of a Hugging Face
 * checkpoint: the index of a 70 B model is ~100 KB. */
#define RL_MODEL_HF_JSON_MAX (16u << 20)
/* Weight files one index names: large checkpoints ship 30-200 shards. */
#define RL_MODEL_HF_SHARDS_MAX 1024
/* A Hugging Face directory's path (its file names are appended). */
#define RL_MODEL_HF_PATH_MAX 1024
/* tokenizer.json / tokenizer_config.json copied by import-hf and
 * export-hf: Qwen3's tokenizer.json is 11 MB. */
#define RL_MODEL_HF_TOKENIZER_MAX (64u << 20)

/* ---- grpo ------------------------------------------------------------ */

/* Parameters the optimizer will hold state for (m and v, fp32 each):
 * the model's own cap. */
#define RL_OPT_PARAMS_MAX RL_MODEL_PARAMS_MAX
/* Parameter spans (tensors) given to the optimizer. */
#define RL_OPT_SPANS_MAX 4096

/* ---- grpo: serve (grpo/serve.h) -------------------------------------- */

/* Sequences decoded together by `grpo serve` (one per choice of a request
 * in flight). A decoding step costs about the same for 1 and 32 rows of
 * the built-in model (its matrices are small), so a full batch is nearly
 * free throughput; each sequence holds a KV cache of prompt + max_tokens
 * positions (~4 KB per position for the default model). */
#define SERVE_BATCH_DEFAULT 32
#define SERVE_BATCH_HARD RL_MODEL_SAMPLE_BATCH_MAX
/* KV caches `grpo serve` keeps for prefix reuse (--prefix-cache-mb):
 * 256 MiB holds the last turn of 16 conversations at the default
 * model's full 4096-token window (~16 MiB each, ~4 KiB per position),
 * ~1% of the machine's memory. 0 disables reuse. */
#define SERVE_PREFIX_CACHE_MB_DEFAULT 256
#define SERVE_PREFIX_CACHE_MB_MAX (64 * 1024)
/* Requests waiting for a place in the batch; past it the server answers
 * 429 at once instead of letting waits grow without bound. A client
 * keeping 32 episodes in flight with n up to 8 stays far below. */
#define SERVE_QUEUE_DEFAULT 256
#define SERVE_QUEUE_HARD 65536
/* Longest prompt in tokens: the model's window less one (room for one
 * new token) and at most this, which is the longest window a checkpoint
 * may have. */
#define SERVE_PROMPT_MAX RL_MODEL_SEQ_MAX
/* Choices per request (n): each takes a place in the batch. */
#define SERVE_N_MAX 16
/* Stop strings per request (OpenAI allows 4) and the length of each. */
#define SERVE_STOP_MAX 4
#define SERVE_STOP_LEN_MAX 256
/* Extra stop token ids per request (stop_token_ids). */
#define SERVE_STOP_IDS_MAX 16
/* Tools of one chat request, and properties of one tool's parameters: the
 * harness offers 6 tools of at most 4 parameters. */
#define SERVE_TOOLS_MAX 128
#define SERVE_TOOL_PARAMS_MAX 64
/* Request latencies kept for the percentiles of /metrics: the last 1024
 * requests are enough for a stable p99 and cost 8 KB. */
#define SERVE_LATENCY_WINDOW 1024
/* The served model's name (--served-model-name, default the checkpoint
 * path as given). */
#define SERVE_NAME_MAX 256
/* Least time between two wake-ups of a stream's connection thread
 * (--stream-interval-ms): tokens decoded in between go out in one event.
 * Each wake-up costs a thread switch and a send (30-50 microseconds of
 * CPU, taken from the model's two cores): at 20 ms (50 events a second,
 * still a smooth stream to a reader) they cost under 5% of the model's
 * CPU at 1 to 32 streams, where one event per step cost 10-18%
 * (docs/serve.md, Benchmark). 0: an event per step. */
#define SERVE_STREAM_INTERVAL_MS_DEFAULT 20
#define SERVE_STREAM_INTERVAL_MS_MAX 1000
/* A floor on the time of one decoding step (--min-step-ms): an
 * accelerator's decoding step costs about the same at batch 1 as at batch
 * 8 (it is bound by reading the weights), where a CPU's grows with the
 * batch. The floor lets one machine stand in for such a server when
 * measuring rollout scheduling (bench_rollout). A second is far above any
 * real step. */
#define SERVE_MIN_STEP_MS_MAX 1000
/* The bearer token of `grpo serve --token-env` (as `harness serve`'s). */
#define SERVE_TOKEN_MAX 512
/* A checkpoint path given to POST /v1/weights (PATH_MAX). */
#define SERVE_WEIGHTS_PATH_MAX 4096

/* ---- grpo: sft/traj --------------------------------------------------- */

/* One trajectory record (a JSONL line): with history=drop every turn
 * carries its whole context and ids, ~100 KB per episode; 64 MiB only
 * stops a corrupt file from being parsed into memory. */
#define RL_TRAJ_LINE_MAX (64u << 20)
/* Tokens of one sample before truncation to the model context: contexts
 * are capped by the template (RL_TPL_TEXT_MAX bytes, >= 1 byte a token
 * for plain text); a record past this is refused, not built. */
#define RL_TRAJ_TOKENS_MAX (1u << 22)
/* Turns of one record: the episode's own hard cap. */
#define RL_TRAJ_TURNS_MAX RL_EP_HARD_TURNS
/* Samples held in memory by one trainer: 4M samples of a few thousand
 * tokens would not fit in memory anyway; a bound keeps a runaway file
 * from growing the index without limit. */
#define RL_TRAJ_SAMPLES_MAX (1u << 22)

/* SFT config file (a few fields) and the data files of one run. */
#define RL_SFT_CONFIG_MAX (1u << 20)
#define RL_SFT_DATA_FILES_MAX 64
/* Tokens of one forward/backward (B x T, padding included) when the
 * config gives none: 8192 tokens of the ~5 M-parameter model keep about
 * 1 GB of activations (model.h: ~130 KB a token); a step's batch is
 * split into as many such micro-batches as needed. */
#define RL_SFT_MICRO_TOKENS 8192
/* Steps of one run: far beyond what 2 cores train in a day. */
#define RL_SFT_STEPS_MAX 10000000L
/* -- GRPO trainer (grpo/grpo, grpo/sample, grpo/loss) -- */

/* A trainer config file is a few dozen fields. */
#define RL_GRPO_CONFIG_MAX (1u << 20)
/* "extends" chains: a base, a variant, a variant of it; deeper is hard to
 * read, and a cycle of config files stops here. */
#define RL_GRPO_CONFIG_EXTENDS_MAX 4
/* G (trajectories per task) and tasks per step: GRPO groups are 4-64,
 * a step a few dozen groups; the caps stop a typo from queueing 10^9
 * episodes. */
#define RL_GRPO_GROUP_MAX 256
#define RL_GRPO_TASKS_PER_STEP_MAX 1024
/* Steps of one run (cosine schedule length). */
#define RL_GRPO_STEPS_MAX 10000000L
/* Tokens one record may resolve to over all its turns' contexts (history
 * drop repeats the prompt every turn): 400 turns of a 32k context would be
 * 13 M; 16 M ints is 64 MB, far above a real episode, and bounds what a
 * corrupt prefix chain can make us allocate. */
#define RL_GRPO_RECORD_TOKENS_MAX (16u << 20)
/* Turns of one record: the episode's own hard cap. */
#define RL_GRPO_TURNS_MAX RL_EP_HARD_TURNS
/* A record's JSON text: same bound as a trajectory file line. */
#define RL_GRPO_RECORD_MAX (256u << 20)
/* Tokens in one training micro-batch (B x T): the model's cap. */
#define RL_GRPO_MICRO_TOKENS_MAX RL_MODEL_BATCH_TOKENS_MAX
/* Extra groups dynamic sampling may draw in one step, per planned group:
 * DAPO resamples until the batch is full; a cap keeps a policy that
 * solves everything (or nothing) from sampling forever. */
#define RL_GRPO_RESAMPLE_FACTOR_MAX 16
/* state.json of a checkpoint and the run's best.json: a few numbers. */
#define RL_GRPO_STATE_MAX (1u << 20)
/* Failures listed in a checkpoint's behaviour profile. */
#define RL_GRPO_PROFILE_TOP 10
/* Distinct failure keys and tool names counted for a profile: a few
 * hundred in practice; past the cap new keys go to "other". */
#define RL_GRPO_PROFILE_KEYS_MAX 4096
/* Evaluation episodes per held-out set and checkpoint. */
#define RL_GRPO_EVAL_EPISODES_MAX 100000
/* First seed of a report's final sets ("final.seed"): any seed in
 * [1, 1e6] keeps first + seeds - 1 far inside the int a record's seed is. */
#define RL_GRPO_FINAL_SEED_MAX 1000000
/* Checkpoints kept besides the best: each is model + 2x optimizer
 * state (~70 MB for the default model). */
#define RL_GRPO_KEEP_MAX 1000
/* Steps of training curves kept in memory for the SVGs. */
#define RL_GRPO_CURVE_MAX 1000000
/* Rejection-sampled SFT file of one flywheel round. */
#define RL_GRPO_SFT_FILE_MAX (1024u << 20)
/* A path in a trainer config (checkpoint, tokenizer, run dir): PATH_MAX
 * is 4096, real paths here are under 200 bytes; longer ones are refused
 * by the config loader with a message, not cut. */
#define GRPO_PATH_MAX 1024
/* fleet.generate and fleet.env of a trainer config, the URLs joined by
 * commas: 64 servers of each kind (OAI_BASE_URLS_MAX,
 * RL_ROLLOUT_ENV_URLS_MAX) at ~60 bytes a URL. */
#define GRPO_FLEET_URLS_CHARS 4096
/* A task selector in a trainer config: "split:train", or a comma list of
 * task ids such as scripts/grpo-probe.sh prints (tens of ids of ~20
 * bytes, several hundred bytes: 512 was too small for a probed list). */
#define GRPO_SEL_MAX 4096
/* Bug kinds (generator.mutation) broken out per held-out set in the
 * experiment report: the generator has 11; tasks of further kinds are
 * counted in the set's totals only. */
#define RL_GRPO_REPORT_KINDS_MAX 16
/* An episode's fix (its last applied edit_file, "old -> new" with blanks
 * collapsed) as shown in the experiment report: one line of code each
 * side fits; longer fixes are cut there but told apart by a hash of the
 * whole text. */
#define RL_GRPO_FIX_TEXT_MAX 96
/* Distinct fixes counted per evaluation: a 300-episode set has at most
 * 300; past the cap an episode's fix counts as distinct but is not
 * ranked. */
#define RL_GRPO_FIXES_MAX 4096
/* Held-out sets of a config's "final" section: the experiment has two. */
#define GRPO_FINAL_SETS_MAX 8
/* Rounds of one flywheel run (grpo flywheel --rounds): each round is a
 * full training run of hours on 2 cores, so a thousand is beyond any real
 * run and stops a typo. */
#define RL_GRPO_FLYWHEEL_ROUNDS_MAX 1000L
/* Groups the asynchronous rollout holds at once: the unfinished ones (a
 * step's worth queued behind the slots' worth, grpo_async_collect; the
 * slots, at most RL_ROLLOUT_ACTIVE_MAX, are fewer than a step's groups can
 * be) and the complete ones of the step being trained: two steps' worth
 * of at most RL_GRPO_TASKS_PER_STEP_MAX groups plus the resampled ones. */
#define RL_GRPO_ASYNC_GROUPS_MAX (2u * RL_GRPO_TASKS_PER_STEP_MAX * (RL_GRPO_RESAMPLE_FACTOR_MAX + 1))
/* Episodes queued or finished and not yet taken by the asynchronous
 * rollout: every member of every group it holds. */
#define RL_GRPO_ASYNC_EPISODES_MAX (RL_GRPO_ASYNC_GROUPS_MAX * RL_GRPO_GROUP_MAX)
/* Training sequences built from one step's records: a few dozen groups of
 * 4-64 episodes, one sequence per turn when history is dropped, make a
 * few thousand; the cap stops a corrupt record set from growing without
 * bound. */
#define RL_GRPO_SEQS_MAX (1u << 20)
/* Data-parallel training (grpo/grpo_dp): bytes of records one rank sends
 * in one exchange (MPI counts are ints, so under 2 GiB over all ranks): a
 * step's episodes on one rank are a few dozen records of well under 1 MB. */
#define RL_GRPO_DP_GATHER_MAX (512u << 20)
/* Steps between two comparisons of the parameters' hash across ranks: a
 * hash is one pass over the weights, far cheaper than a step; a mismatch
 * (a rank that diverged) stops the run. */
#define RL_GRPO_DP_HASH_EVERY 1

#endif
