// The test desktop's wallpaper on Plasma 6, in place of its org.kde.image (ServerLauncher.installPlasmaWallpaper says
// why): Plasma's default picture, read on the GUI thread as the item is made. Plasma 6's own sets `loading` until its
// picture has loaded, which holds plasmashell's "desktop" stage back; this one never sets it.
import QtQuick
import org.kde.plasma.plasmoid

WallpaperItem {
    Rectangle {
        anchors.fill: parent
        color: "#1d2b3a"

        Image {
            anchors.fill: parent
            asynchronous: false
            cache: false
            fillMode: Image.PreserveAspectCrop
            source: "file:///usr/share/wallpapers/Next/contents/images/1280x800.png"
        }
    }
}
