import Coffer
import Foundation

/// A chat line whose content is compressed with the dictionary its `kind` picks (1: text, 2: system).
@Table("chat_line")
struct ChatLine: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var kind: Int64
    @Column(compressed: .dictionaries(by: "kind", [1: 1, 2: 2])) var content: String
    @Column(compressed: .zstd) var attachment: Data?
}

/// `chat_line` with compression turned off on both columns.
@Table("chat_line")
struct UncompressedChatLine: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var kind: Int64
    @Column(compressed: .off) var content: String
    @Column(compressed: .off) var attachment: Data?
}

/// The same table as `chat_line` before compression was declared, to write rows the old way.
@Table("note")
struct PlainNote: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
}

/// `note` with its body compressed with dictionary 1.
@Table("note")
struct CompressedNote: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    @Column(compressed: .dictionary(1)) var body: String
}

/// `note` with compression turned off: written plain, still read through `coffer_decompress`.
@Table("note")
struct UncompressedNote: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    @Column(compressed: .off) var body: String
}

/// Chat-like lines, English and Chinese, 20 to a few hundred bytes, from a seed.
func chatSamples(count: Int, seed: Int = 0) -> [String] {
    let openings = [
        "Are we still on for", "Don't forget", "Can you send me", "I just pushed", "Running late for",
        "明天的会议改到", "请把文件发给我", "我们晚上去吃", "刚刚提交了", "周末一起去",
    ]
    let subjects = [
        "the design review at 3pm", "the quarterly report", "the photos from Saturday", "the fix for the login bug",
        "dinner with Anna and Tom", "下午三点的评审", "上周的季度报告", "周六拍的照片", "登录问题的修复", "和小王小李的晚饭",
    ]
    let tails = [
        "", " — let me know!", " thanks 🙏", " see you there", " 谢谢！", " 好的没问题", " (room 4B, second floor)",
        " 我已经把链接放在群里了，大家有空看一下", " I put the link in the group chat, have a look when you can",
    ]
    return (0..<count).map { index in
        let n = index &* 2_654_435_761 &+ seed
        let line =
            openings[abs(n) % openings.count] + " " + subjects[abs(n / 7) % subjects.count]
            + tails[abs(n / 49) % tails.count]
        return abs(n / 343) % 3 == 0 ? line + " #\(index)" : line
    }
}
