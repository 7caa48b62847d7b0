import Foundation

/// A one-line progress display: redrawn in place on a terminal, printed as a line at most every
/// two seconds otherwise (logs, pipes), so output stays readable in CI.
struct ProgressBar {
    let label: String
    let width = 30
    private let interactive: Bool
    private let handle: FileHandle
    private var lastLine = ContinuousClock.now - .seconds(10)
    private var drawn = false

    init(label: String, toStandardError: Bool = false) {
        self.label = label
        handle = toStandardError ? .standardError : .standardOutput
        interactive = isatty(toStandardError ? STDERR_FILENO : STDOUT_FILENO) == 1
    }

    /// Shows `done` of `total` with `detail` after the bar.
    mutating func update(done: Int, total: Int, detail: String) {
        let filled = total > 0 ? min(width, done * width / total) : 0
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let line = "    \(label) \(bar) \(done)/\(total) \(detail)"
        if interactive {
            fflush(nil)
            handle.write(Data(("\r" + line + "\u{1B}[K").utf8))
            drawn = true
        } else if ContinuousClock.now - lastLine >= .seconds(2) {
            // Through the same buffer as `print`, so lines keep their order in a pipe.
            if handle === FileHandle.standardOutput {
                print(line)
            } else {
                handle.write(Data((line + "\n").utf8))
            }
            lastLine = .now
        }
    }

    /// Ends the line on a terminal.
    mutating func finish() {
        if interactive && drawn {
            handle.write(Data("\n".utf8))
            drawn = false
        }
    }

    /// `12,345`
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index).isMultiple(of: 3) { result.append(",") }
            result.append(character)
        }
        return (value < 0 ? "-" : "") + result
    }
}
