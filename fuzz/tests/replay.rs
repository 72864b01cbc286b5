//! Every target's seeds (made by our encoders) and committed corpus (fuzz/corpora/TARGET/, found
//! and minimised by AFL++) replayed through the target functions: a crash found once stays fixed.

use std::path::Path;

#[test]
fn every_corpus_file_replays_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    let mut replayed = 0;
    for &(name, target) in webstand_fuzz::TARGETS {
        let seeds = webstand_fuzz::seeds::seeds(name);
        assert!(!seeds.is_empty(), "{name} has no seeds");
        for (_, bytes) in seeds {
            target(&bytes);
            replayed += 1;
        }
        let Ok(dir) = std::fs::read_dir(root.join(name)) else {
            continue;
        };
        for entry in dir {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let run = std::panic::catch_unwind(|| target(&bytes));
            assert!(run.is_ok(), "{name}: {} fails", path.display());
            replayed += 1;
        }
    }
    assert!(replayed >= webstand_fuzz::TARGETS.len());
}
