//! `seeds DIR`: writes every target's seed corpus (src/seeds.rs) to DIR/TARGET/.

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: seeds DIR");
        std::process::exit(2);
    };
    for (target, _) in webstand_fuzz::TARGETS {
        let folder = std::path::Path::new(&dir).join(target);
        if let Err(e) = std::fs::create_dir_all(&folder) {
            eprintln!("seeds: cannot make {}: {e}", folder.display());
            std::process::exit(1);
        }
        for (name, bytes) in webstand_fuzz::seeds::seeds(target) {
            if let Err(e) = std::fs::write(folder.join(&name), bytes) {
                eprintln!("seeds: cannot write {name}: {e}");
                std::process::exit(1);
            }
        }
    }
}
