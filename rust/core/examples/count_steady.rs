//! Counts the tokens of a text file many times over, for profiling the counters without the
//! Python binding (`benches/README.md`, "Exact token counts"):
//!
//! ```sh
//! cargo build --release -p clawctx-core --example count_steady
//! valgrind --tool=callgrind target/release/examples/count_steady exact FILE 1000
//! ```
//!
//! `count_steady exact|calibrated FILE REPS [o200k_base|cl100k_base]` counts FILE once to load
//! the vocabulary, then FILE repeated REPS times as one text (so that, as in the Python
//! benchmark `benches/exact_count_steady_state.py`, two runs with different REPS differ only by
//! the steady-state cost of the extra repetitions), and prints the count.

use clawctx_core::token_count::{count_exact, estimate, Encoding};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: count_steady exact|calibrated FILE REPS [ENCODING]");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[2]);
        std::process::exit(1);
    });
    let reps: usize = args[3].parse().unwrap_or_else(|_| {
        eprintln!("REPS must be a number, not {:?}", args[3]);
        std::process::exit(2);
    });
    let encoding = match args.get(4) {
        Some(name) => Encoding::from_name(name).unwrap_or_else(|| {
            eprintln!("unknown encoding {name:?}");
            std::process::exit(2);
        }),
        None => Encoding::O200kBase,
    };
    let count: fn(&str, Encoding) -> u64 = match args[1].as_str() {
        "exact" => count_exact,
        "calibrated" => estimate,
        other => {
            eprintln!("unknown counter {other:?} (exact or calibrated)");
            std::process::exit(2);
        }
    };
    // The first count loads the vocabulary (and, for the estimator, its tables).
    count("warm up 中文", encoding);
    let text = text.repeat(reps);
    println!("{}", count(&text, encoding));
}
