"""Which lexicon entries each catalog row covers, by the row's pattern.

The catalog says what a message means; the lexicon (``parsing/lexicon.py``) says which oMLX call
writes it and in which versions. ``ENTRIES`` ties the two: ``tools/lexicon/name_rows.py`` fills it
from the rows' patterns and keeps the ids named by hand (a row whose text wraps an entry's), and
``tests/parsing/test_lexicon.py`` fails when a row names no entry or misses one it matches.
``FOREIGN`` holds the rows for text oMLX does not write itself, with the reason.
"""

from __future__ import annotations

FOREIGN: dict[str, str] = {
    r"^Started server process \[(?P<pid>\d+)\]": "uvicorn's own startup line",
    r"^Uvicorn running on ": "uvicorn's own startup line",
    r"^Shutting down$": "uvicorn's own shutdown line",
    r"^Waiting for application shutdown": "uvicorn's own shutdown line",
    r"^Application shutdown complete": "uvicorn's own shutdown line",
    r"^Finished server process": "uvicorn's own shutdown line",
}

ENTRIES: dict[str, tuple[str, ...]] = {
    "^CORS origins: ": ("0eaf991e15",),
    "^Loaded settings for \\d+ models": ("f1d4409710",),
    "^Server initialized with \\d+ models": ("ea6732c8e7",),
    "^Memory guard tier: ": ("55cf5a253d", "fd28cad0fe"),
    "^Pinned model: ": ("19a2ba9a6e",),
    "^Default model: ": ("20e7baf6c4",),
    "^Default max tokens: ": ("f0a372fdb8",),
    "^Discovered model: ": ("31f5c1df30", "51cfe19dbf"),
    "^Discovered \\d+ models\\b": ("2457aa2050", "52acf1f788"),
    "^Process memory enforcer started\\b": ("9f0a91e757", "b1858463a6"),
    "^oMLX - LLM inference": ("b5482cfe1c",),
    "^Log directory: ": ("2fa71c7827",),
    "^Binding server at ": ("e4d2a520a7",),
    "^Starting server at ": ("bef3a996b0",),
    "^Engine started\\b": ("8db33fb2f4",),
    "^Engine stopped\\b": ("2059dfe11f",),
    "^BatchedEngine stopped\\b": ("c9ab275af8",),
    "^Scheduler shutdown (?:initiated|completed)": ("40da4e1891", "afa46793e7"),
    "^Preloading pinned model: (?P<model>\\S+)": ("53c93580a6",),
    "^Loading model(?: as LM \\(force_lm=True\\))?: (?P<model>\\S+)": ("0cddfe11e2", "46d82e466d", "718f9cf302"),
    "^Loaded model: (?P<model>\\S+)": ("0c754c1dce", "81d6fcadf8", "c4f053fd94"),
    "^BatchedEngine loaded: (?P<model>\\S+)": ("27f8b04f6d",),
    "^Successfully loaded (?P<model>\\S+) as \\S+ \\(fallback from ": ("112d63047c", "28731f42e7", "8c3a7cac48"),
    "^Manually loaded model: (?P<model>\\S+)": ("1f6d0f85da",),
    "^Unloading model: (?P<model>\\S+)": ("2742835ff7",),
    "^Unloaded model: (?P<model>[^,\\s]+)": ("3ac2f30630", "cc856f0010"),
    "^TTL expired for model '(?P<model>[^']+)'": ("77373ababf",),
    "^Manually unloaded model: (?P<model>\\S+)": ("89d762f226",),
    "^Queued manual unload for active model: (?P<model>\\S+)": ("0dfeb08b30",),
    "^Model load failed for '(?P<model>[^']+)'": ("564b1332a9",),
    "^Failed to preload pinned model (?P<model>\\S+?):": ("529b0470e6",),
    "^Engine pool shutdown complete": ("3ac9d8a7aa",),
    "^Process memory enforcer stopped": ("05e3f6af55", "3aa356355e"),
    "^Server restart requested": ("3c0ec34826",),
    "^Memory pressure level: (?P<from_level>\\w+) -> (?P<to_level>\\w+)(?:.*?current=(?P<current_gb>[\\d.]+)\\s*GB)?(?:.*?soft=(?P<soft_gb>[\\d.]+)\\s*GB)?(?:.*?hard=(?P<hard_gb>[\\d.]+)\\s*GB)?(?:.*?ceiling=(?P<ceiling_gb>[\\d.]+)\\s*GB)?": (
        "15ad02148c",
        "5788141e03",
    ),
    "^Memory pressure after hot-cache shrink: (?P<from_level>\\w+) -> (?P<to_level>\\w+)(?:.*?current=(?P<current_gb>[\\d.]+)\\s*GB)?(?:.*?freed_hot=(?P<freed_hot_gb>[\\d.]+)\\s*GB)?": (
        "eab1b7f05a",
    ),
    "^Memory pressure post-eviction(?:: (?P<from_level>\\w+) -> (?P<to_level>\\w+))?(?:.*?current=(?P<current_gb>[\\d.]+)\\s*GB)?": (
        "22f14229d8",
    ),
    "^Shrank (?:shared )?hot cache under memory pressure: freed=(?P<freed>[\\d.]+\\s*\\w+)": (
        "589dd59dce",
        "b2782eb314",
    ),
    "^Requested pressure cache reclaim on (?P<schedulers>\\d+) scheduler": ("b24d0b56d1",),
    "^Pressure cache reclaim request failed": ("9643c047fa",),
    "^Evicting model '(?P<model>[^']+)' (?:\\(pressure=(?P<to_level>\\w+)|to enforce process memory limit)": (
        "0dec2ff1b4",
        "73f389c0aa",
    ),
    "^Hard memory pressure: aborted (?P<aborted>\\d+) request\\(s\\) on '(?P<model>[^']+)'": ("1c7b4bcb7d",),
    "^Hard memory pressure: requested abort/unload for '(?P<model>[^']+)' \\(aborted=(?P<aborted>\\d+)": (
        "839f94913b",
    ),
    "^Aborted (?P<aborted>\\d+) requests on '(?P<model>[^']+)' (?:due to hard memory|before eviction)": (
        "31ce65e917",
        "b97f30c8f6",
    ),
    "^Aborted (?P<aborted>\\d+) requests(?: on '(?P<model>[^']+)')? due to memory pressure": (
        "252539ec4a",
        "4b7a882536",
    ),
    "^Aborted (?P<aborted>\\d+) requests: ": ("41a16bdaae",),
    "^Aborting in-progress load of '(?P<model>[^']+)' \\(hard memory pressure\\)": ("10adb890a7",),
    "^Requesting abort of loading model '(?P<model>[^']+)' — process memory limit": ("9a3df2b781",),
    "^Hard memory pressure but no models loaded": ("064f6aa339",),
    "^Process memory limit exceeded but no models are loaded": ("0114e6fee6",),
    "^Hard memory pressure but all loaded models are pinned": ("f37e73a4d2",),
    "^Process memory limit exceeded but all loaded models are pinned": ("adceb79212",),
    "^Hard memory pressure, .*requested idle reclaim on (?P<schedulers>\\d+) scheduler": ("76e30fa6c8", "ca890d2f09"),
    "^Hard memory pressure(?: on '(?P<model>[^']+)')?: deferring (?:request abort|destructive enforcement) \\(poll (?P<poll>\\d+)/(?P<polls>\\d+)\\)(?:.*? on (?P<schedulers>\\d+) scheduler)?": (
        "cbd0a37d24",
        "ed95b55c40",
    ),
    "^Emergency memory pressure: aborted (?P<aborted>\\d+)(?:.*?current=(?P<current_gb>[\\d.]+)\\s*GB)?(?:.*?ceiling=(?P<ceiling_gb>[\\d.]+)\\s*GB)?": (
        "6be4e042ac",
    ),
    "^Process memory limit exceeded: (?P<current_gb>[\\d.]+)\\s*GB / (?P<ceiling_gb>[\\d.]+)\\s*GB(?: \\(over by (?P<over_gb>[\\d.]+)\\s*GB\\))?": (
        "a2e1ee5df1",
    ),
    "^Idle reclaim: trimmed Metal transients.*?\\((?P<before_gb>[\\d.]+)\\s*GB -> (?P<after_gb>[\\d.]+)\\s*GB": (
        "1bf0e10e89",
    ),
    "^Chat completion: (?:model=(?P<model>[^,]+), )?(?P<tokens>\\d+) tokens in (?P<seconds>[\\d.]+)s(?: \\((?P<tok_per_s>[\\d.]+) tok/s[^)]*\\))?(?:, prompt: (?P<prompt_tokens>\\d+))?(?:.*?finish_reason=(?P<finish_reason>\\w+))?": (
        "0011b96f42",
        "27a57f951c",
        "7263f2d670",
        "76e8759862",
        "d2484da2e5",
    ),
    "^Incoming (?:(?P<method>[A-Z]+) (?P<path>\\S+))?": ("ba60d154d6", "d1818ff934"),
    "^Chat completion request received: (?:model=(?P<model>[^,]+))?": ("14d3311c2a",),
    "^Added request (?:(?P<request_id>\\S+) with (?P<prompt_tokens>\\d+) prompt tokens)?": ("13ddaec481",),
    "^Completion:\\ (?:model=(?P<model>[^,]+), )?(?P<tokens>\\d+) tokens in (?P<seconds>[\\d.]+)s(?: \\((?P<tok_per_s>[\\d.]+) tok/s[^)]*\\))?(?:, prompt: (?P<prompt_tokens>\\d+))?": (
        "315c334d55",
        "3d72dd75c6",
        "c88321e786",
        "e5d3fe13dc",
        "fa8fdb8800",
    ),
    "^Anthropic\\ message:\\ (?:model=(?P<model>[^,]+), )?(?P<tokens>\\d+) tokens in (?P<seconds>[\\d.]+)s(?: \\((?P<tok_per_s>[\\d.]+) tok/s[^)]*\\))?(?:, prompt: (?P<prompt_tokens>\\d+))?": (
        "2a858ce8fa",
        "fe1ec1162e",
    ),
    "^Responses\\ API:\\ (?:model=(?P<model>[^,]+), )?(?P<tokens>\\d+) tokens in (?P<seconds>[\\d.]+)s(?: \\((?P<tok_per_s>[\\d.]+) tok/s[^)]*\\))?(?:, prompt: (?P<prompt_tokens>\\d+))?": (
        "1b34d95082",
        "3662e64f3f",
    ),
    "^Embedding: (?:model=(?P<model>[^,]+), )?(?P<texts>\\d+) (?:texts|inputs), (?P<dims>\\d+) dims, (?P<tokens>\\d+) tokens(?:, max_length=(?P<max_length>\\d+), truncation=(?P<truncation>\\w+))? in (?P<seconds>[\\d.]+)s": (
        "25f06fa3e7",
        "484913898a",
        "78aaffaa0a",
        "874b782aa8",
    ),
    "^Rerank: model=(?P<model>[^,]+), (?P<docs>\\d+) docs, (?P<tokens>\\d+) tokens in (?P<seconds>[\\d.]+)s": (
        "72bd12d63d",
    ),
    "^\\[(?:vlm_)?stream_generate\\] Aborting request (?P<request_id>\\S+)(?: \\(finished_normally=(?P<finished_normally>\\w+)\\))?": (
        "7dee75b710",
        "b4bb6b57c8",
    ),
    "^Request (?P<request_id>\\S+) cancelled, aborting": ("53716c3fe2",),
    "^Client disconnected\\b": ("03d3e485db", "3de975c8f1", "9fcb53e570", "c310830931"),
    "^Prefill interrupted at (?P<done_tokens>\\d+)/(?P<total_tokens>\\d+)\\b.*\\baborted": ("78e68f9cad",),
    "^Request (?P<request_id>\\S+) rejected by prefill memory guard": ("181bf759fc",),
    "^Preflight rejected \\((?P<prompt_tokens>\\d+) tokens, cached=(?P<cached_tokens>\\d+), request_id=(?P<request_id>[^)]+)\\)": (
        "0213405912",
        "921efc55df",
    ),
    "^Memory admission stalled for (?P<request_id>\\S+?):": ("d771bdcaa5",),
    "^Model load aborted by memory enforcer: (?P<model>\\S+)": ("f0344f6dd6",),
    "^Prefill would require ~(?P<required_gb>[\\d.]+)\\s*GB peak": ("3264529c80", "373064f930", "4c627ea566"),
    "Request aborted: process memory limit exceeded(?: \\(usage (?P<current_gb>[\\d.]+)\\s*GB, ceiling (?P<ceiling_gb>[\\d.]+)\\s*GB\\))?": (
        "18a7bef45f",
        "2f02737f0c",
        "4bc603ed52",
        "4d916525e9",
        "59bcaa193e",
        "7a4d8c4ca6",
        "c3116d2434",
        "eb395b10e7",
    ),
    "oMLX prefill memory guard rejected this prompt": ("97e1c1c65e",),
    "\\b507: Model '(?P<model>[^']+)' \\(.*?\\) does not fit under the dynamic memory ceiling": ("062785d966",),
    "^(?:Chunked prefill(?: \\(first chunk\\))?|Prefill) capacity rejected for (?P<request_id>\\S+?):": (
        "30ec273ea9",
        "b7a28b0023",
        "f7a9d4764f",
    ),
    "^(?P<method>GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) (?P<path>\\S+) → (?P<status>[45]\\d{2})": (
        "36c4cb2a78",
        "4d056b0598",
        "60bc4753dc",
        "7258186d67",
        "cdc7b1d944",
    ),
    "^(?P<method>GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) (?P<path>\\S+) -> (?P<status>[45]\\d{2})": (
        "1a847ca63c",
        "6f7237fb65",
    ),
    "^(?:Chunked prefill(?: \\(first chunk\\))?|Prefill) failed for (?P<request_id>\\S+?):": (
        "38e5aea005",
        "715308a38e",
        "a5635e12a5",
    ),
    "^SpecPrefill sparse prefill failed:": ("2837d5626a",),
    "^Error during chat streaming:": ("446a124622",),
    "^Error during (?:completion|Anthropic|Responses API) streaming:": ("4dd0e96af2", "6b325aeaa5", "7806ab865d"),
    "^SSE generator error:": ("48a92a4fb8",),
}
