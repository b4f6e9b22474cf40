fn main() {
    println!("lwbench: coming soon");
}
