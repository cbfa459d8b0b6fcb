// Shared with Tools/grdb-bench (its ChatGenerator.swift is a symlink to this file): both benches index and
// search the same messages and draw the same queries, each rendered in its own query type.

/// W8's deterministic chat messages: 5–200 characters mixing Chinese runs, English words and emoji.
struct ChatGenerator {
    struct Message {
        let conversation: Int64
        let sender: String
        let body: String
    }

    static let chinese = Array(
        "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域读"
    )
    static let words = [
        "hello", "meeting", "tomorrow", "lunch", "dinner", "project", "deadline", "coffee", "weekend", "photo",
        "video", "call", "later", "thanks", "sorry", "great", "idea", "review", "release", "budget", "travel",
        "flight", "hotel", "birthday", "party", "music", "movie", "game", "football", "weather", "rain", "sunny",
        "office", "report", "design", "server", "database", "search", "index", "mobile", "ticket", "order",
        "payment", "address", "family", "friend", "school", "homework", "doctor", "market", "price", "discount",
    ]
    static let emoji = ["😀", "😂", "👍", "🎉", "❤️", "🙏", "🔥", "👨‍👩‍👧", "🇨🇳", "🤔"]

    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }

    mutating func message() -> Message {
        let target = 5 + next(196)
        var body = ""
        var length = 0
        while length < target {
            switch next(10) {
            case 0..<5:
                let run = 2 + next(10)
                for _ in 0..<run { body.append(Self.chinese[next(Self.chinese.count)]) }
                length += run
            case 5..<9:
                let word = Self.words[next(Self.words.count)]
                body += " " + word + " "
                length += word.count + 2
            default:
                body += Self.emoji[next(Self.emoji.count)]
                length += 1
            }
        }
        return Message(conversation: Int64(next(500)), sender: "user\(next(1_000))", body: body)
    }
}

/// The query sets of W8, drawn the same way for every implementation and written by `render` in each
/// bench's own query type (Coffer's `FullTextPattern`, or FTS4 match text).
struct QueryKinds<Pattern> {
    /// How a bench writes W8's three shapes of query.
    struct Rendering {
        /// One word, or two Chinese characters.
        let term: (String) -> Pattern
        /// Two words next to each other, separated by a space.
        let phrase: (String) -> Pattern
        /// The first three letters of a word.
        let prefix: (String) -> Pattern
    }

    /// The sets by workload name: W8-term, W8-cjk, W8-phrase, W8-prefix, W8-ranked.
    var all: [(String, [Pattern])] = []

    init(messages: [ChatGenerator.Message], count: Int, generator: inout ChatGenerator, render: Rendering) {
        var terms: [Pattern] = []
        var cjk: [Pattern] = []
        var phrases: [Pattern] = []
        var prefixes: [Pattern] = []
        var ranked: [Pattern] = []
        while phrases.count < count {
            let body = Array(messages[generator.next(messages.count)].body)
            // Two Chinese characters next to each other in some message.
            if body.count >= 2 {
                let start = generator.next(body.count - 1)
                let pair = body[start...start + 1]
                if pair.allSatisfy({ ChatGenerator.chinese.contains($0) }) { cjk.append(render.term(String(pair))) }
            }
            let words = String(body).split(whereSeparator: { !$0.isASCII || $0 == " " }).filter { !$0.isEmpty }
            if words.count >= 2, String(body).contains(" \(words[0])  \(words[1]) ") {
                phrases.append(render.phrase("\(words[0]) \(words[1])"))
            }
            terms.append(render.term(ChatGenerator.words[generator.next(ChatGenerator.words.count)]))
            prefixes.append(render.prefix(String(ChatGenerator.words[generator.next(ChatGenerator.words.count)].prefix(3))))
            ranked.append(render.term(ChatGenerator.words[generator.next(ChatGenerator.words.count)]))
        }
        all = [
            ("W8-term", Array(terms.prefix(count))), ("W8-cjk", Array(cjk.prefix(count))),
            ("W8-phrase", Array(phrases.prefix(count))), ("W8-prefix", Array(prefixes.prefix(count))),
            ("W8-ranked", Array(ranked.prefix(count))),
        ]
    }
}
